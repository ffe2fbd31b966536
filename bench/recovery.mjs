// Recovery after a worker dies: the worker is SIGKILLed (a) while a loop is inside the maker (a
// heartbeating activity) and (b) between phases, after the review: the moment the loop's verdict write
// (a local activity, run inside the workflow task) has reached the database. A new worker is
// started at once. Measured: its time from spawn to "worker ready" (about to poll), and from the kill to
// the loop's next progress — the first history event recorded by the new worker, and the first activity
// it started. The history says what the kill interrupted (a workflow task timing out, an activity retried).
//
// Run after `npm run build`: `npm run bench -- recovery`. Settings (environment): RECOVERY_MAKER_SECONDS
// (10: the maker of case a), BENCH_SANDBOX (bwrap). Writes bench/results/recovery.json.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createCleanup } from './lib/cleanup.mjs';
import { requireBuilt } from './lib/dist.mjs';
import { eventTimeMs, fetchLoopHistory, firstEventOfWorker, historyOutline } from './lib/history.mjs';
import { benchLoopBody } from './lib/loop-body.mjs';
import { startResult, table } from './lib/results.mjs';
import { HEAVY_ROLE, LOOP_ROLE, SANDBOX, startStack, submitLoop, waitForLoop, WORKERS } from './lib/stack.mjs';
import { logger, positiveInt, round, sleep } from './lib/util.mjs';

requireBuilt();
const MAKER_SECONDS = positiveInt(process.env.RECOVERY_MAKER_SECONDS ?? 10, 'RECOVERY_MAKER_SECONDS');
const log = logger('recovery');
const cleanup = createCleanup('recovery');

/** Polls `check` every `everyMs` until it is true (or a minute passes). */
async function until(check, everyMs, what) {
  const deadline = performance.now() + 60_000;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Kills the worker of a role (then `afterKill`), starts another at once, waits for the loop to end; what the history says about the gap. */
async function killAndRecover(stack, role, id, label, afterKill = async () => {}) {
  const killed = stack.workers[role];
  const killedAtMs = Date.now();
  await killed.kill();
  await afterKill();
  const next = await stack.startWorker(role);
  log(
    `${label}: killed the ${role} worker ${killed.pid}; worker ${next.pid} ready in ${round(next.startSeconds, 2)} s`,
  );
  const loop = await waitForLoop(stack, id);
  const history = await fetchLoopHistory(stack.temporal, id);
  const firstEvent = firstEventOfWorker(history, next.pid, killedAtMs);
  const firstActivity = firstEventOfWorker(history, next.pid, killedAtMs, ['ACTIVITY_TASK_STARTED']);
  const start = eventTimeMs(history.events[0]);
  const after = historyOutline(history).filter(([ms]) => ms >= killedAtMs - start);
  const retried = after.find(
    ([ms, type]) =>
      type === 'ACTIVITY_TASK_STARTED' && firstActivity && Math.abs(ms - (firstActivity.atMs - start)) < 1,
  );
  const interrupted = after.some(([, type]) => type === 'WORKFLOW_TASK_TIMED_OUT')
    ? 'a workflow task (it timed out)'
    : firstActivity?.attempt > 1
      ? `activity ${retried?.[2] ?? '?'} (retried after its heartbeat timeout)`
      : 'nothing in flight';
  return {
    case: label,
    killedWorker: role,
    loopId: id,
    status: loop.status,
    interrupted,
    workerReadySeconds: round(next.startSeconds, 2),
    killToFirstEventSeconds: firstEvent ? round((firstEvent.atMs - killedAtMs) / 1000, 2) : null,
    firstEvent: firstEvent?.type ?? null,
    killToFirstActivitySeconds: firstActivity ? round((firstActivity.atMs - killedAtMs) / 1000, 2) : null,
    firstActivityAttempt: firstActivity?.attempt ?? null,
    // What the kill interrupted: the events from just before it on, in ms since the workflow started.
    eventsAroundKill: historyOutline(history)
      .filter(([ms]) => ms >= killedAtMs - start - 2000)
      .slice(0, 15),
    killedAtMsSinceStart: killedAtMs - start,
  };
}

await cleanup.main(async () => {
  const result = startResult('recovery');
  log(`maker ${MAKER_SECONDS} s in case a, sandbox ${SANDBOX}; load ${result.loadAtStart.join(' ')}`);
  const stack = await startStack('recovery', cleanup);
  const firstWorkerReadySeconds = round(stack.workers[LOOP_ROLE].startSeconds, 2);
  const cases = [];

  // (a) Inside the maker: killed 2 s after runMaker started (the heartbeat timeout, 20 s, must notice).
  const a = await submitLoop(stack, benchLoopBody(stack.repo, { makerSeconds: MAKER_SECONDS, maxIterations: 1 }));
  const handle = stack.temporal.workflow.getHandle(`loop-${a}`);
  await until(
    async () =>
      (await handle.describe()).raw.pendingActivities?.some(
        (p) => p.activityType?.name === 'runMaker' && p.state === 2,
      ),
    100,
    'runMaker to start',
  );
  await sleep(2000);
  cases.push(await killAndRecover(stack, HEAVY_ROLE, a, 'a: inside the maker'));

  // (b) Between phases: the loop's verdict write (a local activity, run inside the workflow task that
  // follows the review) is caught in flight — the bench holds a lock on the verdict table, so the write
  // waits — and the worker is killed then. The lock is released at once; the write is retried by the new worker.
  const b = await submitLoop(stack, benchLoopBody(stack.repo, { makerSeconds: 2, maxIterations: 1 }));
  await until(
    async () => (await stack.prisma.loop.findUnique({ where: { id: b }, select: { phase: true } }))?.phase === 'MAKER',
    50,
    'the maker phase',
  );
  const lock = new pg.Client({ connectionString: stack.databaseUrl });
  await lock.connect();
  cleanup.add('lock connection', () => lock.end());
  await lock.query('BEGIN');
  // Reads pass (and no other step of the loop writes verdicts); the verdict's insert waits.
  await lock.query('LOCK TABLE "Verdict" IN SHARE ROW EXCLUSIVE MODE');
  const waitingWrite = async () =>
    Number((await lock.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`)).rows[0].n) >
    0;
  await until(waitingWrite, 20, 'the verdict write to wait');
  cases.push(
    await killAndRecover(stack, LOOP_ROLE, b, 'b: between phases (in the verdict write)', () => lock.query('ROLLBACK')),
  );

  for (const c of cases)
    log(
      `${c.case}: ${c.status}; kill → first event of the new worker ${c.killToFirstEventSeconds} s (${c.firstEvent}), → first activity ${c.killToFirstActivitySeconds} s`,
    );
  result.write(
    { makerSecondsCaseA: MAKER_SECONDS, sandbox: SANDBOX, heartbeatTimeoutSeconds: 20, workflowTaskTimeoutSeconds: 10 },
    { firstWorkerReadySeconds, cases },
    [
      `**Recovery** after SIGKILL of a worker, a new one of its role started at once (API and workers as separate processes, workers ${WORKERS}: in case a the worker running the maker, in case b the one running the loop). ` +
        `Times from the kill to the first history event recorded by the new worker, and to the first activity it started.`,
      '',
      ...table(
        [
          'case',
          'loop ended',
          'the kill interrupted',
          'new worker spawn → ready s',
          'kill → first event of the new worker s',
          'kill → its first activity s (attempt)',
        ],
        cases.map((c) => [
          c.case,
          c.status,
          c.interrupted,
          c.workerReadySeconds,
          `${c.killToFirstEventSeconds} (${c.firstEvent})`,
          `${c.killToFirstActivitySeconds} (${c.firstActivityAttempt})`,
        ]),
      ),
      '',
      `A worker's first start (nothing cached by the OS yet) took ${firstWorkerReadySeconds} s to "worker ready".`,
    ],
  );
});
