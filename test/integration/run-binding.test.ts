import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { boundToLoopRun, claimContinuedRun, FORGED_RUN } from '../../activities/run-binding';
import { insertLoop, useTestDatabase } from '../support/database';

// A run cannot be forged (docs/threat-model.md): the loop's activities act only for its own workflow run
// — the first one to act, then each run it continued as new into — against the real database.

const db = useTestDatabase();

let acted: string[] = [];
const activities = () => boundToLoopRun(db.prisma, { act: async (what: string) => void acted.push(what) });
beforeEach(() => (acted = []));

const inRun = (workflowId: string, runId: string) =>
  new MockActivityEnvironment({ workflowExecution: { workflowId, runId } });
const act = (workflowId: string, runId: string, what: string) => inRun(workflowId, runId).run(activities().act, what);
const claim = (workflowId: string, runId: string, continuedFrom: string | null) =>
  inRun(workflowId, runId).run(
    (input: { loopId: string; continuedFrom: string | null }) => claimContinuedRun(db.prisma, input),
    { loopId: 'unused', continuedFrom },
  );

async function expectRefused(attempt: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await attempt.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect(err).toMatchObject({ type: FORGED_RUN, nonRetryable: true, message: expect.stringMatching(message) });
}

const currentRun = async (loopId: string) =>
  (await db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } })).currentRunId;

test("the first run to act is bound; another run under the loop's id — a fresh start or a reset — is refused", async () => {
  const loopId = await insertLoop(db.prisma);
  const [first, forged] = [randomUUID(), randomUUID()];
  await act(`loop-${loopId}`, first, 'prepare');
  await act(`loop-${loopId}`, first, 'maker');
  expect(await currentRun(loopId)).toBe(first);

  await expectRefused(act(`loop-${loopId}`, forged, 'deliver'), /is not the loop's own run/);
  expect(acted).toEqual(['prepare', 'maker']);
  expect(await currentRun(loopId)).toBe(first);
});

test('a run under a workflow id no loop was submitted with does nothing', async () => {
  await expectRefused(
    act('loop-made-up', randomUUID(), 'maker'),
    /no loop was submitted under workflow id loop-made-up/,
  );
  expect(acted).toEqual([]);
});

test('a run continued from the bound run takes over; the old run and a run claiming some other run cannot act', async () => {
  const loopId = await insertLoop(db.prisma);
  const workflowId = `loop-${loopId}`;
  const [first, second, forged] = [randomUUID(), randomUUID(), randomUUID()];
  await act(workflowId, first, 'round 1');

  // A forged run has no continued-from (a fresh start), or names a run that is not the bound one.
  await expectRefused(claim(workflowId, forged, null), /is not the loop's own run/);
  await expectRefused(claim(workflowId, forged, randomUUID()), /is not the loop's own run/);

  await claim(workflowId, second, first);
  // A retried claim of the same run passes again.
  await claim(workflowId, second, first);
  expect(await currentRun(loopId)).toBe(second);
  await act(workflowId, second, 'round 2');
  await expectRefused(act(workflowId, first, 'late'), /is not the loop's own run/);
  expect(acted).toEqual(['round 1', 'round 2']);
});

test('a loop started before runs were bound is bound by its first activity, or by the claim of the run it continued into', async () => {
  const legacy = await insertLoop(db.prisma);
  const next = randomUUID();
  await claim(`loop-${legacy}`, next, randomUUID());
  expect(await currentRun(legacy)).toBe(next);
});
