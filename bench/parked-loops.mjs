// Loops parked in AWAITING_DECISION must not grow the workflows worker's memory. N loops are submitted
// through the API in batches; each runs PARKED_ITERATIONS real iterations (fake maker, verification with
// a fake gate, review by the fake model, judge) in which the reviewer always reports a new BLOCKER, so
// it parks at a MAX_ITERATIONS escalation with the history a real escalated loop has. Every process's
// memory is sampled as they pile up: the workflows worker (with its V8 heap limit and workflow cache as
// the service sets them: service/worker-memory.ts), the activities worker, the API, the Temporal dev
// server and PostgreSQL. Then the EARLIEST parked loops, long evicted from the worker's cache, are
// decided — half retried (their next iteration passes and they are delivered PASSED), half approved
// (delivered APPROVED) — and the bench times the decision's 202 (a Temporal update: the replayed
// workflow has accepted it), its record, and the delivery. Not a test: figures vary by machine and load.
// Everything runs in a temp dir on free ports and is removed at the end.
//
// Run after `npm run build`:
//   npm run bench:parked                 # N=2000 (or `npm run bench -- parked`), 10–15 minutes
//   npm run bench:parked -- 20000        # the large run (or PARKED_LOOPS=20000): see docs/performance.md
// Parking costs 0.35–0.42 core-seconds a loop (one iteration, bubblewrap): 2.4–3.4 loops/s on the 2-core
// development machine under a load of 8–17, so 20,000 take about 1 h 40 min to 2 h 20 min there, 1 h to
// 1 h 10 min when the machine is quiet, and about 8 GB of disk in the temp dir (0.4 MB a loop: its
// workspace 0.3 MB, PostgreSQL, Temporal).
// Settings (environment): PARKED_LOOPS (N), PARKED_ITERATIONS (iterations before the escalation, 1),
// PARKED_BATCH (loops POSTed at once, 50; the next batch goes while fewer than PARKED_IN_FLIGHT are
// submitted but not parked, 100), PARKED_DECIDE (earliest parked loops decided, 20), PARKED_STUCK_SECONDS
// (a loop not parked by then counts as stuck, 900), BENCH_SANDBOX (bwrap), BENCH_WORKERS (split).
// To compare with other worker settings: WORKER_MAX_CACHED_WORKFLOWS, WORKFLOWS_WORKER_HEAP_MB, or
// PARKED_WORKFLOWS_NODE_ARGS (the workflows worker's Node options in place of the service's, "" for
// none: Node's default heap limit). Writes bench/results/parked-loops.json (PARKED_RESULT_NAME names
// another file).
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { createCleanup } from './lib/cleanup.mjs';
import { importDist, requireBuilt } from './lib/dist.mjs';
import { fetchLoopHistory, historySize } from './lib/history.mjs';
import { benchLoopBody } from './lib/loop-body.mjs';
import { allProcesses, memoryOf, startMemorySampler, statusKb, tree } from './lib/proc.mjs';
import { startResult, table } from './lib/results.mjs';
import { LOOP_ROLE, SANDBOX, startStack, TERMINAL, WORKER_ROLES, WORKERS } from './lib/stack.mjs';
import { freePort, logger, mib, percentile, positiveInt, round, sleep } from './lib/util.mjs';

requireBuilt();
const { loadConfig } = await importDist('config/service-config.js');
const { workerNodeArgs } = await importDist('service/worker-memory.js');

const N = positiveInt(process.argv[2] ?? process.env.PARKED_LOOPS ?? 2000, 'N');
const ITERATIONS = positiveInt(process.env.PARKED_ITERATIONS ?? 1, 'PARKED_ITERATIONS');
const BATCH = positiveInt(process.env.PARKED_BATCH ?? 50, 'PARKED_BATCH');
const IN_FLIGHT = positiveInt(process.env.PARKED_IN_FLIGHT ?? 100, 'PARKED_IN_FLIGHT');
const DECIDE = Math.min(N, positiveInt(process.env.PARKED_DECIDE ?? 20, 'PARKED_DECIDE'));
const STUCK_MS = positiveInt(process.env.PARKED_STUCK_SECONDS ?? 900, 'PARKED_STUCK_SECONDS') * 1000;
const SAMPLES = 20;
const DECIDED_TIMEOUT_MS = 10 * 60_000;
/** The worker settings under test, as the service reads them (its defaults unless set here). */
const serviceConfig = loadConfig({ ...process.env, WORKER_ROLE: LOOP_ROLE });
const WORKFLOWS_NODE_ARGS =
  process.env.PARKED_WORKFLOWS_NODE_ARGS !== undefined
    ? process.env.PARKED_WORKFLOWS_NODE_ARGS.split(' ').filter(Boolean)
    : workerNodeArgs(LOOP_ROLE, serviceConfig);

const log = logger('parked');
const cleanup = createCleanup('parked');

async function scrape(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

/** Sum of every series of a Prometheus metric; null when not scraped, 0 for a counter not created yet. */
function metric(text, name, { counter = false } = {}) {
  if (!text) return null;
  const values = [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'gm'))].map((m) =>
    Number(m[1]),
  );
  if (values.length === 0) return counter ? 0 : null;
  return values.reduce((a, b) => a + b, 0);
}

function duMiB(dir) {
  try {
    return mib(Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]));
  } catch {
    return null;
  }
}

const spread = (values) => {
  const present = values.filter((v) => v != null);
  return present.length
    ? { p50: percentile(present, 50), p95: percentile(present, 95), max: Math.max(...present) }
    : null;
};

async function main() {
  const result = startResult(process.env.PARKED_RESULT_NAME ?? 'parked-loops');
  const [metricsPort, sdkMetricsPort] = await Promise.all([freePort(), freePort()]);
  const loopRoleEnv = {
    WORKER_METRICS_PORT: String(metricsPort),
    TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkMetricsPort}`,
  };
  // Only the worker settings asked for are passed on; unset, the worker takes the service's defaults.
  const workerSettings = Object.fromEntries(
    ['WORKER_MAX_CACHED_WORKFLOWS', 'WORKFLOWS_WORKER_HEAP_MB']
      .filter((name) => process.env[name] !== undefined)
      .map((name) => [name, process.env[name]]),
  );
  const stack = await startStack('parked', cleanup, {
    // Every iteration up to the last one gets a new BLOCKER; a retry's next iteration passes.
    passAt: ITERATIONS + 1,
    env: workerSettings,
    roles: { [LOOP_ROLE]: { env: loopRoleEnv, nodeArgs: WORKFLOWS_NODE_ARGS } },
  });
  const loopWorker = stack.workers[LOOP_ROLE];
  const readyLine = loopWorker.tail().find((l) => l.includes('worker ready')) ?? '';
  log(
    `N=${N}, ${ITERATIONS} iteration(s) each, batches of ${BATCH} (${IN_FLIGHT} in flight), workers ${WORKERS}, sandbox ${SANDBOX}; ` +
      `${LOOP_ROLE} worker Node options "${WORKFLOWS_NODE_ARGS.join(' ')}": ${readyLine.replace(/^.*worker ready/, 'worker ready')}`,
  );
  const processes = {
    single: {
      api: stack.api.pid,
      ...Object.fromEntries(WORKER_ROLES.map((role) => [`${role} worker`, stack.workers[role].pid])),
    },
    trees: { temporal: stack.pids.temporal, postgres: stack.pids.postgres },
  };
  // Every second, for the peaks; the table below samples SAMPLES times as loops pile up.
  const sampler = startMemorySampler(processes);
  const body = benchLoopBody(stack.repo, { makerSeconds: 0, gateSeconds: 0, maxIterations: ITERATIONS });

  const started = performance.now();
  const samples = [];
  async function sample(label, parkedCount) {
    const all = allProcesses();
    const [workerMetrics, sdkMetrics] = await Promise.all([
      scrape(`http://127.0.0.1:${metricsPort}/metrics`),
      scrape(`http://127.0.0.1:${sdkMetricsPort}/metrics`),
    ]);
    const rss = (pid) => mib(statusKb(pid)?.rss);
    const s = {
      label,
      parked: parkedCount,
      elapsedSeconds: round((performance.now() - started) / 1000),
      rssMiB: Object.fromEntries(Object.entries(processes.single).map(([name, pid]) => [name, rss(pid)])),
      loopWorkerPeakRssMiB: mib(statusKb(loopWorker.pid)?.hwm),
      // prom-client sees the worker's main thread only: the workflows run in a worker thread of their own.
      loopWorkerMainHeapUsedMiB: round(
        (metric(workerMetrics, 'engineering_loop_nodejs_heap_size_used_bytes') ?? NaN) / 1024 ** 2,
      ),
      stickyCache: {
        size: metric(sdkMetrics, 'temporal_sticky_cache_size'),
        forcedEvictions: metric(sdkMetrics, 'temporal_sticky_cache_total_forced_eviction', { counter: true }),
        hits: metric(sdkMetrics, 'temporal_sticky_cache_hit', { counter: true }),
        misses: metric(sdkMetrics, 'temporal_sticky_cache_miss', { counter: true }),
      },
      temporalPssMiB: memoryOf(tree(stack.pids.temporal, all))?.pssMiB ?? null,
      postgresPssMiB: memoryOf(tree(stack.pids.postgres, all))?.pssMiB ?? null,
    };
    samples.push(s);
    log(
      `${label}: ${Object.entries(s.rssMiB)
        .map(([name, v]) => `${name} ${v}`)
        .join(
          ', ',
        )} MiB RSS; cache ${s.stickyCache.size ?? '?'}; Temporal ${s.temporalPssMiB} MiB, PostgreSQL ${s.postgresPssMiB} MiB PSS`,
    );
    return s;
  }
  await sample('before any loop', 0);

  // ---- submit in batches, park ----
  const inflight = new Map(); // loop id → { index, submittedAt }
  const parked = []; // { id, index, seconds }, in the order seen parked
  const ended = [];
  const stuck = [];
  const submitErrors = [];
  let nextIndex = 0;
  const sampleEvery = Math.max(1, Math.ceil(N / SAMPLES));
  let nextSample = sampleEvery;
  let lastProgress = performance.now();

  async function submitOne(index) {
    for (let attempt = 1; ; attempt++) {
      const res = await stack
        .call('POST', '/v1/loops', stack.keys.submitter, body, { 'idempotency-key': `bench-parked-${index}` })
        .catch((err) => ({ status: 0, body: String(err?.message ?? err) }));
      if (res.status === 201 || res.status === 200) {
        inflight.set(res.body.id, { index, submittedAt: performance.now() });
        return;
      }
      if (submitErrors.length < 50) submitErrors.push({ index, attempt, status: res.status, body: res.body });
      if (attempt >= 5) throw new Error(`submitting loop ${index} failed 5 times; last: ${res.status}`);
      await sleep(1000 * attempt);
    }
  }

  while (parked.length + ended.length + stuck.length < N) {
    for (const [role, worker] of Object.entries(stack.workers))
      if (worker.exit())
        throw new Error(
          `the ${role} worker exited (${JSON.stringify(worker.exit())}) with ${parked.length} loops parked:\n${worker.tail().join('\n')}`,
        );
    if (inflight.size < IN_FLIGHT && nextIndex < N) {
      const batch = Array.from({ length: Math.min(BATCH, N - nextIndex) }, () => nextIndex++);
      await Promise.all(batch.map(submitOne));
    }
    await sleep(500);
    if (inflight.size === 0) continue;
    const rows = await stack.prisma.loop.findMany({
      where: { id: { in: [...inflight.keys()] } },
      select: { id: true, status: true, phase: true, failureReason: true },
    });
    const now = performance.now();
    for (const row of rows) {
      const entry = inflight.get(row.id);
      if (row.status === 'AWAITING_DECISION') {
        inflight.delete(row.id);
        parked.push({ id: row.id, index: entry.index, seconds: (now - entry.submittedAt) / 1000 });
      } else if (TERMINAL.includes(row.status)) {
        inflight.delete(row.id);
        ended.push({ id: row.id, status: row.status, phase: row.phase, reason: row.failureReason?.slice(0, 300) });
        log(`loop ${row.id} ended ${row.status} in ${row.phase} instead of parking: ${row.failureReason ?? ''}`);
      } else if (now - entry.submittedAt > STUCK_MS) {
        inflight.delete(row.id);
        stuck.push({ id: row.id, status: row.status, phase: row.phase });
        log(`loop ${row.id} has not parked after ${STUCK_MS / 1000} s (${row.status}/${row.phase})`);
      }
    }
    while (parked.length >= nextSample && nextSample <= N) {
      await sample(`${nextSample} parked`, parked.length);
      nextSample += sampleEvery;
    }
    if (performance.now() - lastProgress > 60_000) {
      lastProgress = performance.now();
      const rate = parked.length / ((performance.now() - started) / 1000);
      log(`${parked.length}/${N} parked, ${inflight.size} in flight; ${round(rate, 2)} loops/s`);
    }
  }
  const parkSeconds = (performance.now() - started) / 1000;
  if (samples.at(-1).parked !== parked.length) await sample(`${parked.length} parked`, parked.length);
  log(
    `all ${N} settled in ${round(parkSeconds)} s: ${parked.length} parked, ${ended.length} ended, ${stuck.length} stuck`,
  );

  // The workflow tasks are done: the worker gets a moment (GC, cache) before the next sample.
  await sleep(20_000);
  const settled = await sample('20 s after the last parked', parked.length);
  const history = parked.length
    ? historySize(await fetchLoopHistory(stack.temporal, parked[0].id))
    : { events: null, encodedBytes: null, payloadBytes: null };

  // ---- decide the earliest parked loops: long evicted, each is replayed from its history ----
  const chosen = parked.slice(0, DECIDE).map((p, i) => ({ id: p.id, kind: i % 2 === 0 ? 'retry' : 'approve' }));
  await Promise.all(
    chosen.map(async (d) => {
      const detail = await stack.call('GET', `/v1/loops/${d.id}`, stack.keys.approver);
      const open = detail.body?.escalations?.find((e) => e.status === 'OPEN');
      if (!open) d.error = `no open escalation (${detail.status}, loop ${detail.body?.status})`;
      else Object.assign(d, { escalationId: open.id, trigger: open.trigger });
    }),
  );
  // All at once, each timed from its own request.
  await Promise.all(
    chosen
      .filter((d) => d.escalationId)
      .map(async (d) => {
        d.sentAt = performance.now();
        const res = await stack.call('POST', `/v1/loops/${d.id}/decisions`, stack.keys.approver, {
          kind: d.kind,
          escalationId: d.escalationId,
          ...(d.kind === 'retry' ? { guidance: 'bench: one more iteration' } : { comment: 'bench: approved' }),
        });
        Object.assign(d, { status: res.status, answeredSeconds: round(res.ms / 1000, 2) });
        if (res.status !== 202) d.error = `decision answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`;
      }),
  );
  log(`decided the ${chosen.length} earliest parked loops (retry and approve in turn); waiting for their delivery`);
  const deadline = performance.now() + DECIDED_TIMEOUT_MS;
  for (;;) {
    const waiting = chosen.filter((d) => d.status === 202 && d.deliveredSeconds === undefined);
    if (waiting.length === 0 || performance.now() > deadline) break;
    await sleep(200);
    const rows = await stack.prisma.loop.findMany({
      where: { id: { in: waiting.map((d) => d.id) } },
      select: { id: true, status: true, escalations: { select: { status: true }, orderBy: { sequence: 'asc' } } },
    });
    const now = performance.now();
    for (const row of rows) {
      const d = waiting.find((w) => w.id === row.id);
      // Taken: the workflow was replayed, took the decision and recorded it (its escalation is closed).
      if (d.takenSeconds === undefined && row.escalations[0]?.status !== 'OPEN')
        d.takenSeconds = round((now - d.sentAt) / 1000, 2);
      if (TERMINAL.includes(row.status) || (row.status === 'AWAITING_DECISION' && row.escalations.length > 1)) {
        d.takenSeconds ??= round((now - d.sentAt) / 1000, 2);
        d.deliveredSeconds = round((now - d.sentAt) / 1000, 2);
        d.ended = row.escalations.length > 1 ? 'ESCALATED AGAIN' : row.status;
      }
    }
  }
  for (const d of chosen) delete d.sentAt;
  const afterDecisions = await sample('after the decisions', parked.length - chosen.length);
  const memory = sampler.stop();

  // ---- result ----
  const rate = parked.length / parkSeconds;
  const parkLatencies = parked.map((p) => p.seconds);
  const endedAs = {};
  for (const d of chosen)
    endedAs[`${d.kind} → ${d.ended ?? 'not delivered'}`] =
      (endedAs[`${d.kind} → ${d.ended ?? 'not delivered'}`] ?? 0) + 1;
  const decisions = {
    decided: chosen.length,
    accepted: chosen.filter((d) => d.status === 202).length,
    delivered: chosen.filter((d) => d.deliveredSeconds !== undefined).length,
    endedAs,
    answeredSeconds: spread(chosen.map((d) => d.answeredSeconds)),
    takenSeconds: spread(chosen.map((d) => d.takenSeconds)),
    deliveredSeconds: spread(chosen.map((d) => d.deliveredSeconds)),
    stickyCacheMisses:
      afterDecisions.stickyCache.misses != null && settled.stickyCache.misses != null
        ? afterDecisions.stickyCache.misses - settled.stickyCache.misses
        : null,
    loops: chosen,
  };
  const loopWorkerName = `${LOOP_ROLE} worker`;
  const loopWorkerPeak = memory.processes[loopWorkerName]?.peak ?? null;
  const disk = {
    workspacesMiB: duMiB(path.join(stack.dataDir, 'workspaces')),
    temporalMiB: duMiB(path.join(stack.tempDir, 'temporal')),
    postgresMiB: duMiB(path.join(stack.tempDir, 'postgres')),
  };
  const settings = {
    n: N,
    iterationsBeforeEscalation: ITERATIONS,
    batch: BATCH,
    inFlight: IN_FLIGHT,
    decide: DECIDE,
    workers: WORKERS,
    sandbox: SANDBOX,
    loopWorkerNodeArgs: WORKFLOWS_NODE_ARGS,
    loopWorkerReady: readyLine.replace(/^.*worker ready/, 'worker ready'),
    workerSettings,
  };
  const mibCell = (v) => (v == null ? null : Math.round(v));
  const summary = [
    `N=${N} loops, each parked at MAX_ITERATIONS after ${ITERATIONS} iteration(s) (history ${history.events} events, ${round(history.encodedBytes / 1024)} KB), ` +
      `submitted in batches of ${BATCH}; workers ${WORKERS}, sandbox ${SANDBOX}; ${LOOP_ROLE} worker Node options \`${WORKFLOWS_NODE_ARGS.join(' ') || 'none'}\`` +
      `${
        Object.keys(workerSettings).length
          ? `, ${Object.entries(workerSettings)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')}`
          : ''
      }.`,
    '',
    ...table(
      [
        'sample',
        'parked',
        ...Object.keys(processes.single).map((n) => `${n} RSS MiB`),
        'cached loops',
        'Temporal PSS MiB',
        'PostgreSQL PSS MiB',
      ],
      samples.map((s) => [
        s.label,
        s.parked,
        ...Object.values(s.rssMiB).map(mibCell),
        s.stickyCache.size,
        mibCell(s.temporalPssMiB),
        mibCell(s.postgresPssMiB),
      ]),
    ),
    '',
    `${parked.length} of ${N} parked in ${Math.round(parkSeconds)} s: **${round(rate, 2)} loops/s** (submit → parked p50 ${round(percentile(parkLatencies, 50))} s, p95 ${round(percentile(parkLatencies, 95))} s); ` +
      `${ended.length} ended instead, ${stuck.length} stuck, ${submitErrors.length} submission errors. ` +
      `Peaks (sampled every second): ${Object.entries(memory.processes)
        .map(([n, p]) => `${n} ${mibCell(p.peak)} MiB`)
        .join(', ')}. ` +
      `At this rate 20,000 loops take about ${Math.round(20000 / rate / 60)} min.`,
    `The ${decisions.decided} earliest parked loops decided (retry and approve in turn): ${decisions.accepted} accepted (202 in p50 ${decisions.answeredSeconds?.p50 ?? '?'} s), ` +
      `taken by the workflow in p50 ${decisions.takenSeconds?.p50 ?? '?'} s (max ${decisions.takenSeconds?.max ?? '?'} s), ` +
      `delivered in p50 ${decisions.deliveredSeconds?.p50 ?? '?'} s (max ${decisions.deliveredSeconds?.max ?? '?'} s): ` +
      `${Object.entries(endedAs)
        .map(([k, v]) => `${v}× ${k}`)
        .join(', ')}; sticky-cache misses meanwhile ${decisions.stickyCacheMisses ?? '?'}.`,
    `Disk: workspaces ${disk.workspacesMiB} MiB, Temporal ${disk.temporalMiB} MiB, PostgreSQL ${disk.postgresMiB} MiB.`,
  ];
  result.write(
    settings,
    {
      submission: {
        parked: parked.length,
        endedInstead: ended.length,
        stuck: stuck.length,
        submitErrors: submitErrors.length,
        secondsToParkAll: round(parkSeconds),
        parkedPerSecond: round(rate, 2),
        submitToParkedSeconds: spread(parkLatencies.map((s) => round(s))),
      },
      history,
      loopWorkerPeakRssMiB: loopWorkerPeak,
      memory,
      samples,
      decisions,
      disk,
      problems: { ended: ended.slice(0, 50), stuck: stuck.slice(0, 50), submitErrors, workers: stack.workerProblems() },
    },
    summary,
  );
}

await cleanup.main(main);
