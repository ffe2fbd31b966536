import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/activity';
import { ActivityCancellationDetails } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { runMaker } from '../../activities/maker';
import { loadConfig } from '../../config/service-config';
import {
  firstMakerInput,
  inActivity,
  loopActivity,
  preparedLoop,
  useActivityTestBed,
} from '../support/activity-test-bed';
import { CORRECT_SUM } from '../support/fixture-repo';

// A worker that dies after storing the maker's result but before storing the checkpoint's tamper and
// scope check: the retried activity must not run the maker again, and must still check (and store) the
// checkpoint it made. Real Postgres, real git, a real maker process.

const bed = useActivityTestBed('maker-retry');

/** A prepared loop with its contract frozen, and the activity environment of its first attempt. */
async function preparedLoopAttempt(): Promise<{ loopId: string; activity: MockActivityEnvironment }> {
  const { loopId } = await preparedLoop(bed);
  return { loopId, activity: loopActivity(loopId) };
}

test('a retry after the inspection was lost checks the stored checkpoint again, without running the maker', async () => {
  const { loopId, activity } = await preparedLoopAttempt();

  // The maker fixes the code and deletes the tests; each run leaves a line outside the workspace.
  const runs = path.join(bed.dir, 'maker-runs.txt');
  const script = `echo run >> ${runs}; printf '${CORRECT_SUM.replace(/\n/g, '\\n')}' > src/sum.js; rm test/sum.test.js`;
  const input = firstMakerInput(loopId, script);
  const first = await inActivity(activity, () => runMaker(bed.deps, input));
  expect(first.inspected?.map((f) => [f.findingId, f.title, f.severity])).toEqual([
    ['TMP-001', 'Existing test file deleted', 'BLOCKER'],
  ]);

  // What the dead worker never stored: the check's findings and its mark.
  await bed.db.prisma.finding.deleteMany({ where: { loopId } });
  await bed.db.prisma.iteration.updateMany({ where: { loopId }, data: { inspectedAt: null } });

  const retried = await inActivity(loopActivity(loopId, 2), () => runMaker(bed.deps, input));
  expect(fs.readFileSync(runs, 'utf8')).toBe('run\n');
  expect(retried.checkpointCommit).toBe(first.checkpointCommit);
  expect(retried.diffHash).toBe(first.diffHash);
  expect(retried.inspected).toEqual(first.inspected);
  const iteration = await bed.db.prisma.iteration.findUniqueOrThrow({
    where: { loopId_sequence: { loopId, sequence: 1 } },
  });
  expect(iteration.inspectedAt).not.toBeNull();
  expect(iteration.makerAttempts).toBe(1);
  expect(await bed.db.prisma.finding.count({ where: { loopId } })).toBe(first.inspected.length);
});

test('an attempt its dying worker never recorded is recorded as INTERRUPTED when the maker runs again', async () => {
  const { loopId, activity } = await preparedLoopAttempt();
  const input = firstMakerInput(loopId, `printf '${CORRECT_SUM.replace(/\n/g, '\\n')}' > src/sum.js`);
  await inActivity(activity, () => runMaker(bed.deps, input));
  // The worker died while the maker ran: neither its record nor its result were stored.
  await bed.db.prisma.executionRecord.deleteMany({ where: { loopId } });
  await bed.db.prisma.iteration.updateMany({
    where: { loopId },
    data: { makerFinishedAt: null, checkpointCommit: null },
  });

  // Its last heartbeat, 7 s after the process started, is what Temporal hands the next attempt.
  const { makerStartedAt } = await bed.db.prisma.iteration.findFirstOrThrow({ where: { loopId } });
  expect(makerStartedAt).toBeInstanceOf(Date);
  const env = new MockActivityEnvironment({
    attempt: 2,
    workflowExecution: { workflowId: `loop-${loopId}`, runId: 'run-1' },
    heartbeatDetails: { step: 'maker #1', aliveAt: makerStartedAt!.getTime() + 7000 },
  });
  await inActivity(env, () => runMaker(bed.deps, input));
  const records = await bed.db.prisma.executionRecord.findMany({
    where: { loopId, role: 'maker', kind: 'AGENT_PROCESS' },
    orderBy: { createdAt: 'asc' },
  });
  expect(records.map((r) => r.outcome)).toEqual(['INTERRUPTED', 'EXIT_0']);
  expect(records[0]!.latencyMs).toBe(7000);
  expect(records[0]!.detail).toBe(
    `attempt 1 (pid ${records[0]!.pid} on ${os.hostname()}) started at ${makerStartedAt!.toISOString()}, was last seen alive 7 s later, and ended without finishing: its worker stopped (a crash, a restart or a shutdown) and the attempt runs again; what it spent was not reported`,
  );
  // The second attempt's record lost too: the third attempt records that one, and only that one.
  await bed.db.prisma.iteration.updateMany({
    where: { loopId },
    data: { makerFinishedAt: null, checkpointCommit: null },
  });
  await bed.db.prisma.executionRecord.deleteMany({ where: { loopId, outcome: 'EXIT_0' } });
  await inActivity(env, () => runMaker(bed.deps, input));
  const outcomes = await bed.db.prisma.executionRecord.findMany({
    where: { loopId, role: 'maker', kind: 'AGENT_PROCESS' },
  });
  expect(outcomes.map((r) => r.outcome).sort()).toEqual(['EXIT_0', 'INTERRUPTED', 'INTERRUPTED']);
});

test('a maker its worker cancels at the end of the shutdown grace period is recorded INTERRUPTED, once', async () => {
  const { loopId, activity } = await preparedLoopAttempt();
  // A maker that runs until the process is stopped; it says when it has started.
  const started = path.join(bed.dir, `started-${loopId}`);
  const held = firstMakerInput(loopId, `touch ${started}; while :; do sleep 1; done`);
  const run = inActivity(activity, () => runMaker(bed.deps, held)).catch((err: unknown) => err);
  for (let i = 0; i < 600 && !fs.existsSync(started); i++) await new Promise((r) => setTimeout(r, 50));
  expect(fs.existsSync(started)).toBe(true);
  activity.cancel('WORKER_SHUTDOWN', new ActivityCancellationDetails({ workerShutdown: true }));
  expect(await run).toBeInstanceOf(CancelledFailure);
  const [interrupted] = await bed.db.prisma.executionRecord.findMany({ where: { loopId, role: 'maker' } });
  expect(interrupted).toMatchObject({ kind: 'AGENT_PROCESS', provider: 'command', outcome: 'INTERRUPTED' });
  expect(interrupted!.pid).toEqual(expect.any(Number));
  expect(interrupted!.detail).toMatch(
    /^stopped after \d+ s: its worker shut down and the grace period \(SHUTDOWN_GRACE_SECONDS\) ran out; the attempt runs again$/,
  );

  // The next attempt (after the restart) finds that run recorded and adds only its own.
  const retry = loopActivity(loopId, 2);
  await inActivity(retry, () =>
    runMaker(bed.deps, firstMakerInput(loopId, `printf '${CORRECT_SUM.replace(/\n/g, '\\n')}' > src/sum.js`)),
  );
  const records = await bed.db.prisma.executionRecord.findMany({
    where: { loopId, role: 'maker', kind: 'AGENT_PROCESS' },
    orderBy: { createdAt: 'asc' },
  });
  expect(records.map((r) => r.outcome)).toEqual(['INTERRUPTED', 'EXIT_0']);
});

test('a loop that cancels its maker gets a CANCELLED record, not an INTERRUPTED one', async () => {
  const { loopId, activity } = await preparedLoopAttempt();
  const started = path.join(bed.dir, `started-${loopId}`);
  const run = inActivity(activity, () =>
    runMaker(bed.deps, firstMakerInput(loopId, `touch ${started}; while :; do sleep 1; done`)),
  ).catch((err: unknown) => err);
  for (let i = 0; i < 600 && !fs.existsSync(started); i++) await new Promise((r) => setTimeout(r, 50));
  activity.cancel();
  expect(await run).toBeInstanceOf(CancelledFailure);
  const records = await bed.db.prisma.executionRecord.findMany({ where: { loopId, role: 'maker' } });
  expect(records.map((r) => r.outcome)).toEqual(['CANCELLED']);
});

test('a built-in maker cut short records the model calls it made, the cut one too, and an INTERRUPTED session', async () => {
  // A model endpoint that takes the request and never answers: the maker is mid-call when its worker stops.
  const requests: http.IncomingMessage[] = [];
  const model = http.createServer((req) => void requests.push(req));
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  const config = loadConfig({
    DATA_DIR: bed.dir,
    SANDBOX: 'none',
    LLM_BASE_URL: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`,
    LLM_API_KEY: 'test-key',
  });
  const llmDeps = { ...bed.deps, config };
  try {
    const { loopId, activity } = await preparedLoopAttempt();
    const input = {
      ...firstMakerInput(loopId, ''),
      maker: {
        backend: 'llm' as const,
        provider: 'openai' as const,
        maxSteps: 5,
        allowedCommands: [],
        timeoutSeconds: 60,
      },
    };
    const run = inActivity(activity, () => runMaker(llmDeps, input)).catch((err: unknown) => err);
    for (let i = 0; i < 600 && requests.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(requests.length).toBe(1);
    activity.cancel('WORKER_SHUTDOWN', new ActivityCancellationDetails({ workerShutdown: true }));
    expect(await run).toBeInstanceOf(CancelledFailure);
    const records = await bed.db.prisma.executionRecord.findMany({
      where: { loopId, role: 'maker' },
      orderBy: { createdAt: 'asc' },
    });
    expect(records.map((r) => [r.kind, r.outcome, r.promptTokens])).toEqual([
      ['MODEL_CALL', 'cancelled', null],
      ['AGENT_SESSION', 'INTERRUPTED', null],
    ]);
    expect(records[1]!.detail).toMatch(/^stopped after \d+ s: its worker shut down and the grace period/);
  } finally {
    model.closeAllConnections();
    await new Promise((resolve) => model.close(resolve));
  }
});
