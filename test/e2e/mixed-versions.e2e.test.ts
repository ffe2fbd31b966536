import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { deliver, type DeliverInput } from '../../activities/delivery';
import { whileHeartbeating } from '../../activities/heartbeat';
import { stopLauncher } from '../../activities/process/launcher';
import { createSandbox } from '../../activities/sandbox/sandbox';
import { loadConfig } from '../../config/service-config';
import { cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// A rolling upgrade: the loop's workflow code already hands the loop's end to its deliver activity
// (the read model's PASSED/DONE written with the delivery), while the activities worker still runs the
// code from before that — its deliver ignores the hand-over and says nothing of it. The workflow must
// then write the end itself, or the read model would show the loop running for ever.

let h: LoopHarness;
let olderActivities: Worker;
let running: Promise<void>;

beforeAll(async () => {
  h = await startLoopHarness({ workerEnv: { WORKER_ROLE: 'workflows' } });
  const config = loadConfig(h.workerEnv);
  const deps = { prisma: h.db.prisma, config, sandbox: createSandbox(config) };
  const activities = createActivities(deps);
  olderActivities = await Worker.create({
    connection: await NativeConnection.connect({ address: h.workerEnv.TEMPORAL_ADDRESS! }),
    taskQueue: h.taskQueue,
    // The deliver activity as it was before the end rode along: `ended` unread, no `endRecorded`.
    activities: { ...activities, deliver: (input: DeliverInput) => whileHeartbeating(deliver(deps, input), 'deliver') },
  });
  running = olderActivities.run();
});
afterAll(async () => {
  olderActivities?.shutdown();
  await running;
  await stopLauncher();
  await h?.close();
});

test('a deliver activity on older code leaves the end to the workflow, which records it once', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  expect(submitted.status).toBe(201);
  // Only the workflow's own write can show PASSED here: the older deliver writes no status.
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');

  const row = await h.db.prisma.loop.findUniqueOrThrow({ where: { id: submitted.body.id } });
  expect(row.phase).toBe('DONE');
  expect(row.finishedAt).not.toBeNull();
  const ends = await h.db.prisma.loopEvent.findMany({ where: { loopId: row.id, phase: 'DONE' } });
  expect(ends.map((e) => e.status)).toEqual(['PASSED']);

  // In the history: the deliver activity's result carries no endRecorded, and a local activity (the
  // end's write) follows it.
  const events = (await h.temporal.workflow.getHandle(row.workflowId).fetchHistory()).events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliver');
  const delivered = events.findIndex((e) => e.activityTaskCompletedEventAttributes && String(e.activityTaskCompletedEventAttributes.scheduledEventId) === String(scheduled?.eventId));
  expect(delivered).toBeGreaterThan(0);
  const result = Buffer.from(events[delivered]!.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString('utf8');
  expect(JSON.parse(result)).not.toHaveProperty('endRecorded');
  expect(events.slice(delivered).some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(true);
});
