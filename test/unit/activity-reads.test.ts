import { CONTRACT_CACHE_SIZE, loadContract } from '../../activities/contract';
import type { ActivityDeps } from '../../activities/deps';
import { early, inOrder } from '../../activities/in-order';

const contract = {
  objective: 'Add a sum function.',
  outcome: 'Callers can add numbers.',
  acceptanceCriteria: [
    { id: 'AC-1', statement: 'sum adds', verification: { type: 'test', name: 'sum adds two numbers' } },
  ],
};

class NotFound extends Error {}

/** Deps whose only table is ContractVersion: `rows` by `${loopId}/${version}`, counting the queries. */
function contractDeps(rows: Map<string, unknown>) {
  const queries: string[] = [];
  const prisma = {
    contractVersion: {
      findUniqueOrThrow: async ({ where }: { where: { loopId_version: { loopId: string; version: number } } }) => {
        const { loopId, version } = where.loopId_version;
        const key = `${loopId}/${version}`;
        queries.push(key);
        if (!rows.has(key)) throw new NotFound(`no contract ${key}`);
        return { version, hash: `hash-${key}`, contract: rows.get(key) };
      },
    },
  };
  return { deps: { prisma } as unknown as ActivityDeps, queries };
}

describe('inOrder', () => {
  test('returns every value in argument order', async () => {
    const slow = new Promise<string>((resolve) => setTimeout(() => resolve('slow'), 20));
    await expect(inOrder([slow, Promise.resolve(2), Promise.resolve(null)])).resolves.toEqual(['slow', 2, null]);
  });

  test('throws the first failure in argument order, not the first in time', async () => {
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('loop missing')), 20));
    const soon = Promise.reject(new Error('iteration missing'));
    await expect(inOrder([Promise.resolve(1), late, soon])).rejects.toThrow('loop missing');
  });

  test('waits for every read before it throws', async () => {
    let finished = false;
    const slow = new Promise<void>((resolve) =>
      setTimeout(() => {
        finished = true;
        resolve();
      }, 20),
    );
    await expect(inOrder([Promise.reject(new Error('first')), slow])).rejects.toThrow('first');
    expect(finished).toBe(true);
  });
});

describe('early', () => {
  test('a rejection nobody awaits is not unhandled, and still reaches a later await', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const started = early(Promise.reject(new Error('not needed')));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
      await expect(started).rejects.toThrow('not needed');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('loadContract cache', () => {
  test('returns the stored contract, reading each version once', async () => {
    const { deps, queries } = contractDeps(
      new Map([
        ['L1/1', contract],
        ['L1/2', { ...contract, objective: 'Two.' }],
      ]),
    );
    const first = await loadContract(deps, 'L1', 1);
    expect(first).toEqual({
      version: 1,
      hash: 'hash-L1/1',
      contract: expect.objectContaining({ objective: 'Add a sum function.', outOfScope: [] }),
    });
    expect(await loadContract(deps, 'L1', 1)).toEqual(first);
    expect((await loadContract(deps, 'L1', 2)).contract.objective).toBe('Two.');
    expect(queries).toEqual(['L1/1', 'L1/2']);
  });

  test('every caller gets its own copy', async () => {
    const { deps } = contractDeps(new Map([['L2/1', contract]]));
    const first = await loadContract(deps, 'L2', 1);
    first.contract.acceptanceCriteria.push(first.contract.acceptanceCriteria[0]!);
    first.contract.objective = 'changed by a caller';
    const second = await loadContract(deps, 'L2', 1);
    expect(second.contract.objective).toBe('Add a sum function.');
    expect(second.contract.acceptanceCriteria).toHaveLength(1);
  });

  test('a missing version still fails with the query error, and is not remembered', async () => {
    const rows = new Map<string, unknown>();
    const { deps, queries } = contractDeps(rows);
    await expect(loadContract(deps, 'L3', 1)).rejects.toThrow(NotFound);
    rows.set('L3/1', contract);
    expect((await loadContract(deps, 'L3', 1)).version).toBe(1);
    expect(queries).toEqual(['L3/1', 'L3/1']);
  });

  test('is per database client', async () => {
    const a = contractDeps(new Map([['L4/1', contract]]));
    const b = contractDeps(new Map([['L4/1', { ...contract, objective: 'Other database.' }]]));
    expect((await loadContract(a.deps, 'L4', 1)).contract.objective).toBe('Add a sum function.');
    expect((await loadContract(b.deps, 'L4', 1)).contract.objective).toBe('Other database.');
  });

  test('is bounded: the least recently used version is read again', async () => {
    const rows = new Map(Array.from({ length: CONTRACT_CACHE_SIZE + 1 }, (_, i) => [`L5/${i}`, contract] as const));
    const { deps, queries } = contractDeps(rows);
    for (let i = 0; i < CONTRACT_CACHE_SIZE; i++) await loadContract(deps, 'L5', i);
    // Version 0 used again: version 1 is now the least recently used, and goes when one more comes in.
    await loadContract(deps, 'L5', 0);
    await loadContract(deps, 'L5', CONTRACT_CACHE_SIZE);
    expect(queries).toHaveLength(CONTRACT_CACHE_SIZE + 1);
    await loadContract(deps, 'L5', 0);
    expect(queries).toHaveLength(CONTRACT_CACHE_SIZE + 1);
    await loadContract(deps, 'L5', 1);
    expect(queries.slice(-1)).toEqual(['L5/1']);
    expect(queries).toHaveLength(CONTRACT_CACHE_SIZE + 2);
  });
});
