import fs from 'node:fs';
import path from 'node:path';
import { makerThenVerify } from '../../activities/maker-then-verify';
import type { ResolvedGate } from '../../domain/gates';
import {
  firstMakerInput,
  inActivity,
  loopActivity,
  preparedLoop,
  TESTS_GATE,
  useActivityTestBed,
} from '../support/activity-test-bed';
import { CORRECT_SUM } from '../support/fixture-repo';

// The maker's activity starts the gates on its checkpoint and stores the maker's result and the
// inspection's findings once the first gate runs (activities/maker-then-verify.ts); it marks the iteration
// verified only after those rows. Here the iteration's row is held locked by another transaction from the agent's run on, so
// the maker's result cannot be stored until the test lets go: the gate must start all the same, and the
// activity still end with everything stored; a result that cannot be stored at all fails the activity
// only once the gate has ended. Real Postgres, real git, real processes.

const bed = useActivityTestBed('verify-beside-records');

/** Polls `seen` every 50 ms for up to 30 s; whether it held. */
async function until(seen: () => boolean | Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 600; i++) {
    if (await seen()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/**
 * The maker's activity of the loop's first iteration: a maker that waits for the file `go`, then fixes
 * the code, and `gate`. No review is asked (the budget is spent before the maker), so no model is called.
 */
function makerThenVerifyOnWord(loopId: string, go: string, gate: ResolvedGate) {
  const fix = `until [ -f ${go} ]; do sleep 0.05; done; printf '${CORRECT_SUM.replace(/\n/g, '\\n')}' > src/sum.js`;
  const move = (n: number, phase: 'VERIFY' | 'REVIEW') =>
    ({ loopId, status: 'RUNNING', phase, roundIteration: 1, lastVerdict: null, failureReason: null, move: n }) as const;
  return inActivity(loopActivity(loopId), () =>
    makerThenVerify(bed.deps, {
      ...firstMakerInput(loopId, fix, [gate]),
      verify: {
        progress: move(2, 'VERIFY'),
        review: { reviewer: { backend: 'llm' }, profile: null, priorSignatures: [], progress: move(3, 'REVIEW') },
        budget: { maxAgentSeconds: 1 },
        usageBefore: { tokens: 0, costUsd: 0, agentMs: 5_000 },
      },
    }),
  );
}

test("the gates start on the checkpoint before the maker's result is stored, and the iteration is verified after it", async () => {
  const { loopId } = await preparedLoop(bed);
  const go = path.join(bed.dir, `go-${loopId}`);
  const gateStarted = path.join(bed.dir, `gate-${loopId}`);
  // The maker's word is given once the row is locked.
  const gate: ResolvedGate = { ...TESTS_GATE, argv: ['sh', '-c', `touch ${gateStarted} && node --test`] };
  const run = makerThenVerifyOnWord(loopId, go, gate);
  const iteration = () => bed.db.prisma.iteration.findFirst({ where: { loopId, sequence: 1 } });
  // Locked once the agent runs (its pid is stored on the row before that): no UPDATE of the row passes then.
  expect(await until(async () => (await iteration())?.makerPid != null)).toBe(true);
  const { id } = (await iteration())!;
  let gateRanWhileHeld = false;
  let storedWhileHeld = true;
  await bed.db.prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT id FROM "Iteration" WHERE id = ${id} FOR NO KEY UPDATE`;
      fs.writeFileSync(go, '');
      gateRanWhileHeld = await until(() => fs.existsSync(gateStarted));
      storedWhileHeld = (await bed.db.prisma.iteration.findUniqueOrThrow({ where: { id } })).makerFinishedAt !== null;
    },
    { timeout: 60_000 },
  );
  expect(gateRanWhileHeld).toBe(true);
  expect(storedWhileHeld).toBe(false);

  const result = await run;
  expect(result.verification).toMatchObject({ status: 'VERIFIED' });
  if (result.verification?.status !== 'VERIFIED') return;
  expect(result.verification.result.gates.find((g) => g.gate === 'tests')?.status).toBe('PASSED');
  expect(result.verification.result.review).toBeUndefined();
  const stored = await bed.db.prisma.iteration.findUniqueOrThrow({ where: { id } });
  expect(stored.checkpointCommit).toBe(result.checkpointCommit);
  expect(stored.makerFinishedAt).not.toBeNull();
  expect(stored.inspectedAt).not.toBeNull();
  expect(stored.verifiedAt).not.toBeNull();
  expect(stored.verifiedAt!.getTime()).toBeGreaterThanOrEqual(stored.makerFinishedAt!.getTime());
}, 120_000);

test("the maker's result and inspection are stored once the first gate runs, not before, and not after it ends", async () => {
  const { loopId } = await preparedLoop(bed);
  const go = path.join(bed.dir, `go-${loopId}`);
  const release = path.join(bed.dir, `release-${loopId}`);
  const gate: ResolvedGate = {
    ...TESTS_GATE,
    argv: ['sh', '-c', `until [ -f ${release} ]; do sleep 0.05; done; node --test`],
  };
  const run = makerThenVerifyOnWord(loopId, go, gate);
  fs.writeFileSync(go, '');
  const iteration = () => bed.db.prisma.iteration.findFirst({ where: { loopId, sequence: 1 } });
  // Stored while the gate is still held.
  expect(await until(async () => (await iteration())?.inspectedAt != null)).toBe(true);
  fs.writeFileSync(release, '');
  const result = await run;
  expect(result.verification).toMatchObject({ status: 'VERIFIED' });
  const stored = (await iteration())!;
  // The verification's first command (the base's tests, run before the gates) was started (its start time
  // is taken before it is) before the maker's rows were written.
  const evidence = await bed.db.prisma.evidence.findMany({ where: { loopId }, orderBy: { startTime: 'asc' } });
  const first = evidence[0]!.startTime!.getTime();
  expect(stored.makerFinishedAt!.getTime()).toBeGreaterThanOrEqual(first);
  expect(stored.inspectedAt!.getTime()).toBeGreaterThanOrEqual(first);
}, 120_000);

test("a verification's set-up that takes long does not hold the maker's result back", async () => {
  const { loopId } = await preparedLoop(bed);
  const go = path.join(bed.dir, `go-${loopId}`);
  const release = path.join(bed.dir, `release-${loopId}`);
  // The checkout's install runs until the test releases it.
  const loop = await bed.db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } });
  const install = { argv: ['sh', '-c', `until [ -f ${release} ]; do sleep 0.05; done`], timeoutSeconds: 60 };
  const setup = {
    commands: [{ ...install, source: 'test', detail: 'held' }],
    outputs: [],
    binDirs: [],
    corepack: [],
    notes: [],
  };
  await bed.db.prisma.loop.update({
    where: { id: loopId },
    data: { gatePlan: { ...(loop.gatePlan as object), setup } },
  });
  const run = makerThenVerifyOnWord(loopId, go, TESTS_GATE);
  fs.writeFileSync(go, '');
  const iteration = () => bed.db.prisma.iteration.findFirst({ where: { loopId, sequence: 1 } });
  expect(await until(async () => (await iteration())?.inspectedAt != null)).toBe(true);
  const setupRows = () => bed.db.prisma.evidence.count({ where: { loopId, gate: { startsWith: 'setup' } } });
  // Stored while the install was still held: its evidence is written only when it ends.
  expect(await setupRows()).toBe(0);
  fs.writeFileSync(release, '');
  const result = await run;
  expect(result.verification).toMatchObject({ status: 'VERIFIED' });
  expect(await setupRows()).toBeGreaterThan(0);
}, 120_000);

test("a maker's result that cannot be stored fails the activity only once the gates it started have ended", async () => {
  const { loopId } = await preparedLoop(bed);
  const go = path.join(bed.dir, `go-${loopId}`);
  const gateStarted = path.join(bed.dir, `gate-${loopId}`);
  const release = path.join(bed.dir, `release-${loopId}`);
  const gateEnded = path.join(bed.dir, `ended-${loopId}`);
  // The gate runs until the test releases it, then its tests, then says it ended.
  const held = `touch ${gateStarted}; until [ -f ${release} ]; do sleep 0.05; done; node --test; touch ${gateEnded}`;
  const gate: ResolvedGate = { ...TESTS_GATE, argv: ['sh', '-c', held] };
  let endedWhenSettled: boolean | null = null;
  const run = makerThenVerifyOnWord(loopId, go, gate).then(
    () => null,
    (err: unknown) => {
      endedWhenSettled = fs.existsSync(gateEnded);
      return err;
    },
  );
  const iteration = () => bed.db.prisma.iteration.findFirst({ where: { loopId, sequence: 1 } });
  expect(await until(async () => (await iteration())?.makerPid != null)).toBe(true);
  const { id } = (await iteration())!;
  // The row goes while the maker's result waits to be written: that write then fails.
  await bed.db.prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT id FROM "Iteration" WHERE id = ${id} FOR NO KEY UPDATE`;
      fs.writeFileSync(go, '');
      expect(await until(() => fs.existsSync(gateStarted))).toBe(true);
      await tx.$executeRaw`DELETE FROM "Iteration" WHERE id = ${id}`;
    },
    { timeout: 60_000 },
  );
  fs.writeFileSync(release, '');
  const failure = await run;
  expect(failure).toBeInstanceOf(Error);
  // Nothing of the attempt outlived it: the gate had ended when the activity failed.
  expect(endedWhenSettled).toBe(true);
}, 120_000);
