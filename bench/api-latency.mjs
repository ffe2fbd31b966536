// API latency at fixed request rates, open-loop (requests leave on schedule whatever the answers do):
// POST /v1/loops and GET /v1/loops/:id with the worker stopped, so the figures are the API's (and its
// PostgreSQL's and Temporal's), not those of loops running on the same cores. Before that, with a worker,
// decisions: loops parked at their contract approval are rejected at a fixed rate (a decision is a
// Temporal update the workflow must accept, so it needs the worker).
//
// Also, at the same rates, the bench's own Temporal client starting workflows nobody runs: Temporal's share.
// Before each rate: a wait for the machine to go quiet (lib/settle.mjs) and a short uncounted burst at the rate;
// beside the POSTs, the disk's own latency (a synced 4 KB write every 100 ms), since each accepted loop is a commit.
//
// Run after `npm run build`: `npm run bench -- api-latency`. Settings (environment): API_RATES ("20,50"
// requests/s), API_SECONDS (20 per rate), API_DECISIONS (40 loops decided), API_DECISION_RATE (5/s).
// Writes bench/results/api-latency.json.
import { performance } from 'node:perf_hooks';
import { createCleanup } from './lib/cleanup.mjs';
import { requireBuilt } from './lib/dist.mjs';
import { benchLoopBody } from './lib/loop-body.mjs';
import { startResult, table } from './lib/results.mjs';
import { settle, startDiskProbe } from './lib/settle.mjs';
import { SANDBOX, startStack, submitLoop } from './lib/stack.mjs';
import { logger, percentile, positiveInt, positiveList, round, sleep } from './lib/util.mjs';

requireBuilt();
const RATES = positiveList(process.env.API_RATES ?? '20,50', 'API_RATES');
const SECONDS = positiveInt(process.env.API_SECONDS ?? 20, 'API_SECONDS');
const DECISIONS = positiveInt(process.env.API_DECISIONS ?? 40, 'API_DECISIONS');
const DECISION_RATE = positiveInt(process.env.API_DECISION_RATE ?? 5, 'API_DECISION_RATE');
const WARM_UP_SECONDS = 2;
const log = logger('api-latency');
const cleanup = createCleanup('api-latency');

/**
 * Sends `count` requests `1000 / rate` ms apart without waiting for answers. Latency is from each
 * request's send; `maxLagMs` says how far sending fell behind schedule (large: the bench was the limit).
 */
async function openLoop(rate, count, send, ok) {
  const start = performance.now();
  let maxLagMs = 0;
  const pending = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    maxLagMs = Math.max(maxLagMs, performance.now() - due);
    pending.push(send(i).catch((err) => ({ status: 0, ms: null, error: String(err?.message ?? err) })));
  }
  const answers = await Promise.all(pending);
  const good = answers.filter((a) => ok(a.status));
  const ms = good.map((a) => a.ms);
  const errors = answers.filter((a) => !ok(a.status));
  return {
    rate,
    requests: count,
    p50Ms: round(percentile(ms, 50)),
    p95Ms: round(percentile(ms, 95)),
    p99Ms: round(percentile(ms, 99)),
    maxMs: round(Math.max(0, ...ms)),
    // How the slow ones are spread: answers slower than 100 ms, 500 ms, 1 s.
    over100Ms: ms.filter((m) => m > 100).length,
    over500Ms: ms.filter((m) => m > 500).length,
    over1000Ms: ms.filter((m) => m > 1000).length,
    errors: errors.length,
    errorExamples: [
      ...new Set(errors.map((e) => `${e.status} ${e.error ?? JSON.stringify(e.body).slice(0, 200)}`)),
    ].slice(0, 5),
    maxSendLagMs: round(maxLagMs),
  };
}

/** Polls the database until every loop is in one of `statuses` (or `limitMs` passes). */
async function waitForStatus(prisma, ids, statuses, limitMs) {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const done = await prisma.loop.count({ where: { id: { in: ids }, status: { in: statuses } } });
    if (done === ids.length) return;
    if (performance.now() > deadline)
      throw new Error(`only ${done} of ${ids.length} loops reached ${statuses.join('/')} in ${limitMs / 1000} s`);
    await sleep(500);
  }
}

await cleanup.main(async () => {
  const result = startResult('api-latency');
  log(
    `rates ${RATES.join(', ')}/s for ${SECONDS} s each, ${DECISIONS} decisions at ${DECISION_RATE}/s; load ${result.loadAtStart.join(' ')}`,
  );
  const stack = await startStack('api-latency', cleanup);
  const { call, keys, prisma } = stack;

  // ---- decisions (worker running): park loops at their contract approval, then reject them on schedule ----
  const parkBody = benchLoopBody(stack.repo, { maxIterations: 1, requireContractApproval: true });
  const parkedIds = [];
  for (let i = 0; i < DECISIONS; i++) parkedIds.push(await submitLoop(stack, parkBody, `bench-park-${i}`));
  await waitForStatus(prisma, parkedIds, ['AWAITING_DECISION'], 600_000);
  const escalations = await prisma.escalation.findMany({
    where: { loopId: { in: parkedIds }, status: 'OPEN' },
    select: { id: true, loopId: true },
  });
  log(`${parkedIds.length} loops parked; deciding at ${DECISION_RATE}/s`);
  const decisions = await openLoop(
    DECISION_RATE,
    escalations.length,
    (i) =>
      call('POST', `/v1/loops/${escalations[i].loopId}/decisions`, keys.approver, {
        kind: 'reject',
        escalationId: escalations[i].id,
        comment: 'bench',
      }),
    (status) => status === 202,
  );
  await waitForStatus(prisma, parkedIds, ['REJECTED'], 600_000);
  // The worker stops (gracefully) here: from now on submitted loops wait in Temporal's task queue.
  await stack.stopWorkers();
  log(`decisions: p50 ${decisions.p50Ms} ms, p99 ${decisions.p99Ms} ms; worker stopped`);

  // ---- POST and GET with the worker stopped ----
  const body = benchLoopBody(stack.repo);
  const submitted = [];
  let serial = 0;
  const post = async () => {
    const res = await call('POST', '/v1/loops', keys.submitter, body, {
      'idempotency-key': `bench-latency-${serial++}`,
    });
    if (res.status === 201) submitted.push(res.body.id);
    return res;
  };
  const get = (i) => call('GET', `/v1/loops/${submitted[i % submitted.length]}`, keys.submitter);
  let noopSerial = 0;
  const startAlone = async () => {
    const started = performance.now();
    await stack.temporal.workflow.start('benchNoop', {
      taskQueue: 'bench-noop',
      workflowId: `bench-noop-${noopSerial++}`,
      args: [],
    });
    return { status: 'started', ms: performance.now() - started };
  };
  // Warm-up, one at a time: the first requests pay for lazy compilation and new connections.
  for (let i = 0; i < 20; i++) await post();
  for (let i = 0; i < 20; i++) await get(i);
  const rows = [];
  const settles = [];
  const disks = [];
  for (const rate of RATES) {
    // What ran before (loops, the decisions, another bench) must not be measured: the machine goes quiet
    // first, then a short burst at this rate (not counted) opens the connections the rate needs.
    const settled = await settle(stack.tempDir);
    settles.push({ rate, ...settled });
    log(
      `settle before ${rate}/s: ${settled.settled ? 'quiet' : 'not quiet'} after ${settled.seconds} s (${settled.dirtyBeforeMiB} MiB dirty at start; last window busy ${settled.lastWindow.busyShare}, iowait ${settled.lastWindow.iowaitShare}, synced write max ${settled.lastWindow.syncedWriteMaxMs} ms)`,
    );
    await openLoop(rate, rate * WARM_UP_SECONDS, post, (s) => s === 201);
    await openLoop(rate, rate * WARM_UP_SECONDS, get, (s) => s === 200);
    // Each accepted loop is a durable commit: the disk's own latency meanwhile, to read the POSTs against.
    const stopDiskProbe = await startDiskProbe(stack.tempDir);
    const posts = await openLoop(rate, rate * SECONDS, post, (s) => s === 201);
    const disk = await stopDiskProbe();
    log(
      `POST at ${rate}/s: p50 ${posts.p50Ms} ms, p95 ${posts.p95Ms} ms, p99 ${posts.p99Ms} ms, ${posts.errors} errors; disk meanwhile: synced 4 KB write p99 ${disk.p99Ms} ms, max ${disk.maxMs} ms`,
    );
    const gets = await openLoop(rate, rate * SECONDS, get, (s) => s === 200);
    log(`GET at ${rate}/s: p50 ${gets.p50Ms} ms, p95 ${gets.p95Ms} ms, p99 ${gets.p99Ms} ms, ${gets.errors} errors`);
    // What Temporal alone costs of a POST: the bench's own client starting a workflow nobody runs.
    const starts = await openLoop(rate, rate * SECONDS, startAlone, (s) => s === 'started');
    log(
      `Temporal start alone at ${rate}/s: p50 ${starts.p50Ms} ms, p95 ${starts.p95Ms} ms, p99 ${starts.p99Ms} ms, ${starts.errors} errors`,
    );
    disks.push({ rate, ...disk });
    rows.push(
      { route: 'POST /v1/loops', ...posts },
      { route: '(the disk meanwhile: a synced 4 KB write every 100 ms)', rate, requests: disk.samples, ...disk },
      { route: 'GET /v1/loops/:id', ...gets },
      { route: '(Temporal StartWorkflow alone)', ...starts },
    );
  }
  rows.push({ route: 'POST /v1/loops/:id/decisions (worker running)', ...decisions });

  result.write(
    {
      rates: RATES,
      secondsPerRate: SECONDS,
      decisions: DECISIONS,
      decisionRate: DECISION_RATE,
      sandbox: SANDBOX,
      workerDuringPostAndGet: 'stopped',
    },
    { rows, settles, diskDuringPosts: disks, apiLog: stack.api.problems() },
    [
      `**API latency**, open-loop at fixed rates for ${SECONDS} s each, the API as its own process; POST and GET with the worker stopped ` +
        `(loops wait in Temporal's task queue), decisions (reject, a Temporal update) with it running. Latency from each request's send, in ms. ` +
        "The StartWorkflow row is the bench's own Temporal client starting a workflow nobody runs, at the same rate: Temporal's share of a POST. " +
        `Before each rate the bench waits for the machine to go quiet (\`sync\`, then for 1 s CPU under 10 %, I/O wait under 2 % and every synced 4 KB write under 30 ms: ${settles.map((s) => `${s.rate}/s ${s.settled ? `after ${s.seconds} s` : `not reached in ${s.seconds} s`}`).join(', ')}) ` +
        `and sends ${WARM_UP_SECONDS} s of POSTs and GETs at the rate, not counted. Every accepted loop is a durable commit, so a POST waits for the disk: ` +
        `while the POSTs ran, a synced 4 KB write every 100 ms took ${disks.map((d) => `p99 ${d.p99Ms} ms, max ${d.maxMs} ms (${d.rate}/s)`).join('; ')}.`,
      '',
      ...table(
        ['route', 'rate /s', 'requests', 'p50', 'p95', 'p99', 'max', '> 100 ms', '> 1 s', 'errors', 'send lag max'],
        rows.map((r) => [
          r.route,
          r.rate,
          r.requests,
          r.p50Ms,
          r.p95Ms,
          r.p99Ms,
          r.maxMs,
          r.over100Ms,
          r.over1000Ms,
          r.errors,
          r.maxSendLagMs,
        ]),
      ),
    ],
  );
});
