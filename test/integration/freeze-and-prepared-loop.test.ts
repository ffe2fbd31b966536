import type { ActivityDeps } from '../../activities/deps';
import { freezeContract, loadContract } from '../../activities/contract';
import { sha256 } from '../../activities/git';
import { preparedLoop } from '../../activities/prepared-workspace';
import { canonicalJson, goalContractSchema } from '../../domain/contract';
import { insertLoop, useTestDatabase } from '../support/database';
import { loopRequest } from '../support/loop-request';

// Two reads on every loop's path, against real Postgres: the contract's freeze is one statement (the
// first write of a version wins), and the loop's prepared workspace is read once per worker.

const db = useTestDatabase();

const contract = goalContractSchema.parse(loopRequest('/repo', ['true']).contract);

test('a contract version is frozen with its canonical hash, and freezing it again returns the first', async () => {
  const loopId = await insertLoop(db.prisma);
  const before = Date.now();
  const first = await freezeContract(db.deps, { loopId, version: 1, contract, reason: 'submitted' });
  expect(first).toEqual({ version: 1, hash: sha256(canonicalJson(contract)) });

  const changed = { ...contract, objective: 'Something else entirely.' };
  expect(await freezeContract(db.deps, { loopId, version: 1, contract: changed, reason: 'retried' })).toEqual(first);
  const rows = await db.prisma.contractVersion.findMany({ where: { loopId } });
  expect(rows).toHaveLength(1);
  expect(rows[0]!.reason).toBe('submitted');
  // Stamped with the call's time, read back as Prisma reads it (UTC columns).
  expect(rows[0]!.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
  expect(rows[0]!.createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
  expect((await loadContract(db.deps, loopId, 1)).contract).toEqual(contract);

  const second = await freezeContract(db.deps, { loopId, version: 2, contract: changed, reason: 'amended' });
  expect(second).toEqual({ version: 2, hash: sha256(canonicalJson(changed)) });
});

test('freezing for a loop that does not exist fails and writes nothing', async () => {
  await expect(
    freezeContract(db.deps, { loopId: 'no-such-loop', version: 1, contract, reason: 'submitted' }),
  ).rejects.toThrow();
  expect(await db.prisma.contractVersion.count({ where: { loopId: 'no-such-loop' } })).toBe(0);
});

test('a loop not yet prepared is an error and is not kept; once prepared, its workspace is read once and its base each time', async () => {
  const loopId = await insertLoop(db.prisma);
  await expect(preparedLoop(db.deps, loopId)).rejects.toThrow(`loop ${loopId} has no prepared workspace`);

  const gatePlan = { gates: [], profile: null, notes: [], warnings: [] };
  await db.prisma.loop.update({
    where: { id: loopId },
    data: { workspacePath: '/work/a', baseCommit: 'b'.repeat(40), gatePlan },
  });
  const first = await preparedLoop(db.deps, loopId);
  expect(first).toEqual({ workspacePath: '/work/a', baseCommit: 'b'.repeat(40), repoUrl: '/repo', gatePlan });

  // The columns never change once prepared: a change behind the service's back is not read again. The
  // base is read each time: delivery moves it when it replays the change onto a moved base.
  await db.prisma.loop.update({
    where: { id: loopId },
    data: { workspacePath: '/work/b', baseCommit: 'c'.repeat(40) },
  });
  first.gatePlan!.notes.push('changed by a caller');
  expect(await preparedLoop(db.deps, loopId)).toEqual({
    workspacePath: '/work/a',
    baseCommit: 'c'.repeat(40),
    repoUrl: '/repo',
    gatePlan,
  });

  // Kept per database client: another client reads its own.
  const other = { prisma: db.prisma.$extends({}) } as unknown as ActivityDeps;
  expect((await preparedLoop(other, loopId)).workspacePath).toBe('/work/b');
});

test('a loop that does not exist is an error', async () => {
  await expect(preparedLoop(db.deps, 'no-such-loop')).rejects.toThrow();
});
