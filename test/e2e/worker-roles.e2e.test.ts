import fs from 'node:fs';
import path from 'node:path';
import { CORRECT_SUM, createFixtureRepo, makerRuns, scriptedMaker } from '../support/fixture-repo';
import { cleanLedger } from '../support/fake-llm-server';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { waitUntilNoProcessMatching } from '../support/processes';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

// The layout `npm start` runs: one worker for loops and their record writes (WORKER_ROLE=workflows), one
// for makers, gates, reviews and git (WORKER_ROLE=activities). Each kind of task runs only where it
// belongs, and both can die mid-maker without the loop losing anything.

let h: LoopHarness;
let activities: WorkerProcess;
beforeAll(async () => {
  h = await startLoopHarness({ workerEnv: { WORKER_ROLE: 'workflows' } });
  activities = await startWorkerProcess({ ...h.workerEnv, WORKER_ROLE: 'activities' });
});
afterAll(async () => {
  await activities?.stop();
  await h?.close();
});

/** Who ran each started task of the loop's history: `<pid>@<host>` identities, by event type. */
async function identities(
  workflowId: string,
): Promise<{ workflowTasks: Set<number>; activityTasks: Set<number>; localActivities: number }> {
  const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
  const pid = (identity: string | null | undefined) => Number(identity?.split('@')[0]);
  const events = history.events ?? [];
  return {
    workflowTasks: new Set(
      events
        .filter((e) => e.workflowTaskStartedEventAttributes)
        .map((e) => pid(e.workflowTaskStartedEventAttributes!.identity)),
    ),
    activityTasks: new Set(
      events
        .filter((e) => e.activityTaskStartedEventAttributes)
        .map((e) => pid(e.activityTaskStartedEventAttributes!.identity)),
    ),
    localActivities: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
  };
}

test('workflow tasks and record writes run on the workflows worker, every activity on the activities worker', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  expect(submitted.status).toBe(201);
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');

  const ran = await identities(loop.workflowId);
  expect([...ran.workflowTasks]).toEqual([h.worker.pid]);
  expect([...ran.activityTasks]).toEqual([activities.pid]);
  // The contract's freeze and the verdict (the phases' own activities record entering them).
  expect(ran.localActivities).toBeGreaterThanOrEqual(2);
  expect(h.worker.output()).toContain('loops and their record writes, no commands');
  expect(activities.output()).toMatch(/up to \d+ activities at once/);
});

// Both workers die (SIGKILL) while the maker runs, as on a crashed machine: new ones replay the loop from
// its history and run the maker again, and nothing is lost or done twice.
test('both workers killed mid-maker take the sandbox with them; new ones finish the loop with no iteration lost or repeated', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } }, hangOnce: [1] });
  h.llm.enqueue({ content: cleanLedger });
  const reviewsBefore = h.llm.requests.length;
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const hangMarker = path.join(maker.stateDir, 'hung-1');
  const deadline = Date.now() + 120_000;
  while (!fs.existsSync(hangMarker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(fs.existsSync(hangMarker)).toBe(true);

  const killed = { workflows: h.worker.pid, activities: activities.pid };
  await Promise.all([h.worker.kill(), activities.kill()]);
  // The maker was started by the killed worker's process launcher, which stops what it started.
  await waitUntilNoProcessMatching(maker.stateDir);
  await h.restartWorker();
  activities = await startWorkerProcess({ ...h.workerEnv, WORKER_ROLE: 'activities' });

  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  // One iteration, whose maker ran twice: the killed attempt and the retry on the new worker.
  expect(loop.iterations.map((i: any) => [i.sequence, i.roundIteration, i.makerAttempts, i.verdict.verdict])).toEqual([
    [1, 1, 2, 'PASS'],
  ]);
  expect(makerRuns(maker.stateDir)).toEqual([1, 1]);
  // The interrupted attempt's half-done work did not leak into the checkpoint.
  expect(loop.iterations[0].changedFiles).toEqual(['src/sum.js']);
  expect(await h.db.prisma.iteration.count({ where: { loopId: loop.id } })).toBe(1);
  expect(h.llm.requests.length - reviewsBefore).toBe(1);
  // The killed attempt had written the move into MAKER, and its retry wrote it again: one event.
  const events = await h.db.prisma.loopEvent.findMany({
    where: { loopId: loop.id },
    orderBy: { createdAt: 'asc' },
    select: { phase: true },
  });
  expect(events.map((e) => e.phase).filter((phase) => phase !== 'SETUP')).toEqual([
    'PREPARING',
    'CONTRACT',
    'MAKER',
    'VERIFY',
    'REVIEW',
    'JUDGE',
    'DONE',
  ]);
  const ran = await identities(loop.workflowId);
  expect([...ran.workflowTasks].sort()).toEqual([killed.workflows, h.worker.pid].sort());
  expect([...ran.activityTasks].sort()).toEqual([killed.activities, activities.pid].sort());
});
