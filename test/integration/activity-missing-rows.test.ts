import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ActivityDeps } from '../../activities/deps';
import { inspectChanges } from '../../activities/inspect-changes';
import { runMaker } from '../../activities/maker';
import { launcherDrained, stopLauncher } from '../../activities/process/launcher';
import { runReview } from '../../activities/review/run-review';
import { runVerification } from '../../activities/verification/run-verification';
import { createTestDatabase, insertLoop, type TestDatabase } from '../support/database';

// The activities read their rows (and the contract) together; a missing row must still fail as the
// one-after-the-other reads did: the loop's first, then the iteration's, whatever else is missing too.

let db: TestDatabase;
let deps: ActivityDeps;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'missing-rows-'));
  const config = { dataDir: dir, workspacesDir: path.join(dir, 'workspaces'), cachesDir: path.join(dir, 'caches') };
  deps = { prisma: db.prisma, config, sandbox: { mode: 'none', owner: null } } as unknown as ActivityDeps;
});
afterAll(async () => {
  // The checkout and diff a failed verification or review started beside its reads end on their own.
  await launcherDrained();
  await stopLauncher();
  await db?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function newLoop(prepared: boolean): Promise<string> {
  const id = randomUUID();
  return insertLoop(db.prisma, {
    id,
    status: 'RUNNING',
    phase: 'MAKER',
    ...(prepared ? { workspacePath: path.join(dir, 'workspaces', id), baseCommit: 'a'.repeat(40) } : {}),
  });
}

const notFound = (modelName: string) => ({ code: 'P2025', meta: expect.objectContaining({ modelName }) });

const at = (loopId: string) => ({ loopId, sequence: 1, contractVersion: 1, gates: [] });
const checkpoint = (loopId: string) => ({ ...at(loopId), checkpointCommit: 'b'.repeat(40) });
const maker = (loopId: string) =>
  ({
    ...at(loopId),
    roundIteration: 1,
    maxIterations: 3,
    directives: [],
    maker: { backend: 'command', argv: ['true'], timeoutSeconds: 10 },
  }) as never;
const review = (loopId: string) =>
  ({ ...checkpoint(loopId), reviewer: { backend: 'llm' }, profile: null, priorSignatures: [] }) as never;

test('a missing loop fails with the loop not found, though its iteration and contract are missing too', async () => {
  const loopId = randomUUID();
  await expect(runMaker(deps, maker(loopId))).rejects.toMatchObject(notFound('Loop'));
  await expect(inspectChanges(deps, at(loopId))).rejects.toMatchObject(notFound('Loop'));
  await expect(runVerification(deps, checkpoint(loopId))).rejects.toMatchObject(notFound('Loop'));
  await expect(runReview(deps, review(loopId))).rejects.toMatchObject(notFound('Loop'));
});

test('a missing iteration fails with the iteration not found, though the contract is missing too', async () => {
  const loopId = await newLoop(true);
  await expect(inspectChanges(deps, at(loopId))).rejects.toMatchObject(notFound('Iteration'));
  await expect(runVerification(deps, checkpoint(loopId))).rejects.toMatchObject(notFound('Iteration'));
  await expect(runReview(deps, review(loopId))).rejects.toMatchObject(notFound('Iteration'));
});

test('the maker of a loop without a workspace fails on that before it reads the contract', async () => {
  const loopId = await newLoop(false);
  await expect(runMaker(deps, maker(loopId))).rejects.toThrow(`loop ${loopId} has no prepared workspace`);
});

test('a missing contract fails with the contract not found once the rows are there', async () => {
  const loopId = await newLoop(true);
  await db.prisma.iteration.create({
    data: {
      loopId,
      sequence: 1,
      roundIteration: 1,
      contractVersion: 1,
      startCommit: 'a'.repeat(40),
      checkpointCommit: 'b'.repeat(40),
    },
  });
  await expect(inspectChanges(deps, at(loopId))).rejects.toMatchObject(notFound('ContractVersion'));
  await expect(runVerification(deps, checkpoint(loopId))).rejects.toMatchObject(notFound('ContractVersion'));
  await expect(runReview(deps, review(loopId))).rejects.toMatchObject(notFound('ContractVersion'));
});
