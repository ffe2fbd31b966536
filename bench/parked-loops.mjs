// Loops parked in AWAITING_DECISION must not grow the worker's memory: N loops are submitted through the
// real API, each parks at its contract approval (after cloning and freezing the contract, before any
// maker), and the worker's RSS is sampled as they pile up — with the Temporal dev server's and PostgreSQL's.
// Then the earliest parked loops (long evicted from the worker's workflow cache) are approved, to show
// they are still alive: each is replayed from its history and moves on. Not a test: figures vary by
// machine and load. Everything runs in its own temp dir on free ports and is removed at the end.
//
// Run after `npm run build`:
//   npm run bench:parked                    # N=2000
//   npm run bench:parked -- 20000           # the documented large run (or PARKED_LOOPS=20000)
// N=2000 took about 10 minutes on the 2-core development machine (3.3 loops parked per second); N=20000
// needs about 2 hours there, ~5 GB of disk for the loops' workspaces, and the dev server's memory grows by
// about 85 KB per loop. Settings (environment): PARKED_LOOPS (N), PARKED_CONCURRENCY (loops submitted but
// not yet parked, 20), PARKED_DECIDE (how many of the earliest parked loops to approve, 20),
// WORKER_MAX_CACHED_WORKFLOWS (the worker's cache, 200), PARKED_WORKER_NODE_OPTIONS (NODE_OPTIONS for the
// worker only, e.g. --max-old-space-size=512), SANDBOX (bwrap), PARKED_STUCK_SECONDS (a loop not parked by
// then is reported stuck, 600). Writes bench/results/parked-loops.json (parked-loops-cache<K>.json for
// another cache size or worker options; PARKED_RESULT_NAME names it).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { apiClient, createKeys } from './lib/api-client.mjs';
import { createCleanup } from './lib/cleanup.mjs';
import { importDist, requireBuilt } from './lib/dist.mjs';
import { startFakeLlm } from './lib/fake-llm.mjs';
import { createNodeFixtureRepo } from './lib/fixture-repo.mjs';
import { startInfrastructure } from './lib/infrastructure.mjs';
import { allProcesses, memoryOf, pssKb, statusKb, tree } from './lib/proc.mjs';
import { startWorker } from './lib/service-processes.mjs';
import { freePort, loadavg, logger, machine, mib, percentile, positiveInt, round, sleep } from './lib/util.mjs';

requireBuilt();
const { buildApp } = await importDist('api/app.js');
const { createPrismaClient } = await importDist('prisma/client.js');

const N = positiveInt(process.argv[2] ?? process.env.PARKED_LOOPS ?? 2000, 'N');
const CONCURRENCY = positiveInt(process.env.PARKED_CONCURRENCY ?? 20, 'PARKED_CONCURRENCY');
const DECIDE = Math.min(N, positiveInt(process.env.PARKED_DECIDE ?? 20, 'PARKED_DECIDE'));
const CACHE = Number(process.env.WORKER_MAX_CACHED_WORKFLOWS ?? 200);
const SANDBOX = process.env.SANDBOX ?? 'bwrap';
/** Node options for the worker only, e.g. `--max-old-space-size=512` to see what the parked loops really need. */
const WORKER_NODE_OPTIONS = process.env.PARKED_WORKER_NODE_OPTIONS ?? '';
const STUCK_MS = positiveInt(process.env.PARKED_STUCK_SECONDS ?? 600, 'PARKED_STUCK_SECONDS') * 1000;
const SAMPLE_EVERY = Math.max(1, Math.ceil(N / 10));
const DECIDED_TIMEOUT_MS = 10 * 60_000;
const TERMINAL = ['PASSED', 'APPROVED', 'REJECTED', 'CANCELLED', 'FAILED'];
const RESULT_FILE = new URL(
  `./results/${process.env.PARKED_RESULT_NAME ?? (CACHE === 200 && !WORKER_NODE_OPTIONS ? 'parked-loops' : `parked-loops-cache${CACHE}`)}.json`,
  import.meta.url,
);

const log = logger('parked');
const cleanup = createCleanup('parked');

// ---- metrics and disk ---------------------------------------------------------------------------------------
async function scrape(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}
/**
 * Sum of every series of a metric in a Prometheus exposition: null when not scraped or absent; a counter
 * the exporter has not created yet (never incremented) counts 0.
 */
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

/** Median and largest of the values that are there. */
function spread(values) {
  const present = values.filter((v) => v != null);
  return present.length ? { median: percentile(present, 50), max: Math.max(...present) } : null;
}

// ---- the run ----------------------------------------------------------------------------------------------
async function main() {
  const machineAtStart = { ...machine(), loadavg: loadavg() };
  log(
    `N=${N}, ${CONCURRENCY} in flight, worker cache ${CACHE}, sandbox ${SANDBOX}; ${machineAtStart.cpus} cores, load ${machineAtStart.loadavg.join(' ')}`,
  );
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-parked-'));
  cleanup.add('temp dir', async () => fs.rmSync(tempDir, { recursive: true, force: true }));

  const [metricsPort, sdkMetricsPort] = await Promise.all([freePort(), freePort()]);
  const { databaseUrl, temporalAddress, postmasterPid, temporalPid } = await startInfrastructure(tempDir, cleanup);
  const llm = await startFakeLlm();
  cleanup.add('fake LLM', () => llm.close());
  const repo = path.join(tempDir, 'fixture');
  fs.mkdirSync(repo);
  createNodeFixtureRepo(repo);
  const dataDir = path.join(tempDir, 'data');
  fs.mkdirSync(dataDir);

  const taskQueue = 'bench-parked';
  const worker = await startWorker({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    DATA_DIR: dataDir,
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: 'bench-key',
    LLM_MODEL: 'bench-reviewer',
    LOG_LEVEL: 'warn',
    SANDBOX,
    WORKER_MAX_CACHED_WORKFLOWS: String(CACHE),
    WORKER_METRICS_PORT: String(metricsPort),
    TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkMetricsPort}`,
    ...(WORKER_NODE_OPTIONS ? { NODE_OPTIONS: WORKER_NODE_OPTIONS } : {}),
  });
  cleanup.add('worker', () => worker.stop());
  log(`worker pid ${worker.pid}, Temporal dev server pid ${temporalPid}, PostgreSQL postmaster pid ${postmasterPid}`);

  const prisma = createPrismaClient(databaseUrl);
  cleanup.add('database client', () => prisma.$disconnect());
  const connection = await Connection.connect({ address: temporalAddress });
  cleanup.add('Temporal client', () => connection.close());
  const temporal = new Client({ connection });
  const app = await buildApp({
    prisma,
    temporal,
    taskQueue,
    logLevel: 'error',
    // The bench is one API key submitting thousands of loops: the rate limit is not what is measured.
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    policy: {
      repositories: { allowLocal: true, connectTimeoutSeconds: 20 },
      decisions: { allowDeadlineApprove: false, separationOfDuties: true, signalActors: [] },
      sandbox: { mode: SANDBOX },
      disk: { path: dataDir, minFreeBytes: 2048 * 1024 ** 2 },
    },
  });
  cleanup.add('API', () => app.close());
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const keys = await createKeys(prisma);
  const api = apiClient(baseUrl);

  const loopBody = {
    repository: { url: repo, baseRef: 'main' },
    contract: {
      objective: 'Make sum() add its two arguments.',
      outcome: 'Callers of sum() get the arithmetic sum.',
      acceptanceCriteria: [
        { id: 'AC-1', statement: 'sum adds two numbers', verification: { type: 'test', name: 'sum adds two numbers' } },
        { id: 'AC-2', statement: 'the test suite passes', verification: { type: 'gate', gate: 'tests' } },
      ],
      constraints: ['Do not change the tests.'],
    },
    gates: [{ gate: 'tests', argv: ['node', '--test'], timeoutSeconds: 120 }],
    maker: { backend: 'command', argv: ['true'], timeoutSeconds: 60 },
    maxIterations: 1,
    setup: [],
    requireContractApproval: true,
    delivery: { push: false },
  };

  // ---- samples ----
  const started = performance.now();
  const elapsed = () => round((performance.now() - started) / 1000);
  const samples = [];
  async function sample(label, parkedCount) {
    const processes = allProcesses();
    const [workerMetrics, sdkMetrics] = await Promise.all([
      scrape(`http://127.0.0.1:${metricsPort}/metrics`),
      scrape(`http://127.0.0.1:${sdkMetricsPort}/metrics`),
    ]);
    const workerMemory = statusKb(worker.pid);
    const s = {
      label,
      parked: parkedCount,
      elapsedSeconds: elapsed(),
      worker: workerMemory
        ? { rssMiB: mib(workerMemory.rss), peakRssMiB: mib(workerMemory.hwm), pssMiB: mib(pssKb(worker.pid)) }
        : null,
      // The worker's main thread only (prom-client): workflows run in a worker thread whose heap this does not show.
      workerHeapUsedMiB: (() => {
        const v = metric(workerMetrics, 'engineering_loop_nodejs_heap_size_used_bytes');
        return v == null ? null : round(v / 1024 ** 2);
      })(),
      stickyCache: {
        size: metric(sdkMetrics, 'temporal_sticky_cache_size'),
        forcedEvictions: metric(sdkMetrics, 'temporal_sticky_cache_total_forced_eviction', { counter: true }),
        hits: metric(sdkMetrics, 'temporal_sticky_cache_hit', { counter: true }),
        misses: metric(sdkMetrics, 'temporal_sticky_cache_miss', { counter: true }),
      },
      temporalDevServer: memoryOf(tree(temporalPid, processes)),
      postgres: memoryOf(tree(postmasterPid, processes)),
      benchProcessWithApi: { rssMiB: mib(process.memoryUsage().rss / 1024) },
      loadavg: loadavg(),
    };
    samples.push(s);
    log(
      `${label}: ${parkedCount} parked, worker RSS ${s.worker?.rssMiB ?? '?'} MiB (heap ${s.workerHeapUsedMiB ?? '?'}), cache ${s.stickyCache.size ?? '?'}, ` +
        `Temporal ${s.temporalDevServer?.rssMiB ?? '?'} MiB, PostgreSQL PSS ${s.postgres?.pssMiB ?? '?'} MiB (${s.postgres?.processes ?? '?'} processes), load ${s.loadavg[0]}`,
    );
    return s;
  }
  await sample('before any loop', 0);

  // ---- submit N loops, CONCURRENCY of them submitted but not yet parked at any time ----
  const inflight = new Map(); // loop id → { index, submittedAt }
  const parked = []; // { id, index, seconds } in the order they were seen parked
  const ended = []; // loops that ended instead of parking
  const stuck = [];
  const submitErrors = [];
  let posting = 0;
  let nextIndex = 0;
  let nextSample = SAMPLE_EVERY;
  let lastProgress = performance.now();
  const submissionStarted = performance.now();
  let lastSubmittedAt = submissionStarted;

  async function submitOne(index) {
    posting += 1;
    try {
      for (let attempt = 1; ; attempt++) {
        const res = await api('POST', '/v1/loops', keys.submitter, loopBody, {
          'idempotency-key': `bench-parked-${index}`,
        }).catch((err) => ({ status: 0, body: String(err?.message ?? err) }));
        if (res.status === 201 || res.status === 200) {
          inflight.set(res.body.id, { index, submittedAt: performance.now() });
          lastSubmittedAt = performance.now();
          return;
        }
        if (submitErrors.length < 50)
          submitErrors.push({
            index,
            attempt,
            status: res.status,
            body: typeof res.body === 'string' ? res.body.slice(0, 300) : res.body,
          });
        if (attempt >= 5)
          throw new Error(
            `submitting loop ${index} failed 5 times; last: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
          );
        await sleep(1000 * attempt);
      }
    } finally {
      posting -= 1;
    }
  }

  let failure = null;
  while (parked.length + ended.length + stuck.length < N) {
    if (failure) throw failure;
    if (worker.exit())
      throw new Error(
        `the worker exited (${JSON.stringify(worker.exit())}) with ${parked.length} loops parked:\n${worker.tail().join('\n')}`,
      );
    while (inflight.size + posting < CONCURRENCY && nextIndex < N) {
      const index = nextIndex++;
      submitOne(index).catch((err) => (failure ??= err));
    }
    await sleep(250);
    if (inflight.size === 0) continue;
    const rows = await prisma.loop.findMany({
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
        ended.push({
          id: row.id,
          index: entry.index,
          status: row.status,
          phase: row.phase,
          failureReason: row.failureReason?.slice(0, 500) ?? null,
        });
        log(`loop ${row.id} ended ${row.status} in ${row.phase} instead of parking: ${row.failureReason ?? ''}`);
      } else if (now - entry.submittedAt > STUCK_MS) {
        inflight.delete(row.id);
        stuck.push({
          id: row.id,
          index: entry.index,
          status: row.status,
          phase: row.phase,
          seconds: round((now - entry.submittedAt) / 1000),
        });
        log(`loop ${row.id} has not parked after ${STUCK_MS / 1000} s (${row.status}/${row.phase})`);
      }
    }
    while (parked.length >= nextSample && nextSample <= N) {
      await sample(`${nextSample} parked`, parked.length);
      nextSample += SAMPLE_EVERY;
    }
    if (performance.now() - lastProgress > 30_000) {
      lastProgress = performance.now();
      log(
        `${parked.length}/${N} parked, ${inflight.size} in flight, ${ended.length} ended, ${stuck.length} stuck; ${round(parked.length / ((performance.now() - submissionStarted) / 1000), 2)} loops/s`,
      );
    }
  }
  const parkSeconds = (performance.now() - submissionStarted) / 1000;
  const submitSeconds = (lastSubmittedAt - submissionStarted) / 1000;
  if (samples.at(-1).parked !== parked.length) await sample(`${parked.length} parked`, parked.length);
  log(
    `all ${N} settled in ${round(parkSeconds)} s: ${parked.length} parked, ${ended.length} ended, ${stuck.length} stuck`,
  );

  // The workflow tasks are done; give the worker a moment (GC, cache) and sample again.
  await sleep(20_000);
  const settled = await sample('20 s after the last parked', parked.length);
  const openInDb = await prisma.loop.count({ where: { status: 'AWAITING_DECISION' } });

  // ---- prove the earliest parked loops (evicted long ago) are alive: approve them, see them move on ----
  const chosen = parked.slice(0, DECIDE);
  const missesBefore = settled.stickyCache.misses;
  // The open escalation of each first (the id a person sees in the inbox), then every approval at once,
  // so each loop's time to move on counts from its own 202.
  const decided = await Promise.all(
    chosen.map(async ({ id }) => {
      const detail = await api('GET', `/v1/loops/${id}`, keys.approver);
      const open = detail.body?.escalations?.find((e) => e.status === 'OPEN');
      return open
        ? { id, escalationId: open.id, escalationTrigger: open.trigger }
        : { id, error: `no open escalation (status ${detail.status}, loop ${detail.body?.status})` };
    }),
  );
  await Promise.all(
    decided
      .filter((d) => d.escalationId)
      .map(async (d) => {
        const res = await api('POST', `/v1/loops/${d.id}/decisions`, keys.approver, {
          kind: 'approve',
          escalationId: d.escalationId,
          comment: 'bench: approved to show a parked loop is alive',
        });
        Object.assign(d, {
          decisionStatus: res.status,
          decidedAt: performance.now(),
          leftAfterSeconds: null,
          settledAfterSeconds: null,
          state: null,
        });
        if (res.status !== 202) d.error = `decision answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`;
      }),
  );
  log(
    `approved ${decided.filter((d) => d.decisionStatus === 202).length} of the ${chosen.length} earliest parked loops; waiting for them to move on`,
  );
  const decidedDeadline = performance.now() + DECIDED_TIMEOUT_MS;
  for (;;) {
    const waiting = decided.filter((d) => d.decisionStatus === 202 && d.settledAfterSeconds === null);
    if (waiting.length === 0 || performance.now() > decidedDeadline) break;
    await sleep(250);
    const rows = await prisma.loop.findMany({
      where: { id: { in: waiting.map((d) => d.id) } },
      select: {
        id: true,
        status: true,
        phase: true,
        lastVerdict: true,
        escalations: { select: { trigger: true, status: true, sequence: true }, orderBy: { sequence: 'asc' } },
      },
    });
    const now = performance.now();
    for (const row of rows) {
      const d = waiting.find((w) => w.id === row.id);
      // Left: the workflow was replayed, took the decision and recorded it (the escalation is no longer OPEN).
      if (d.leftAfterSeconds === null && row.escalations[0] && row.escalations[0].status !== 'OPEN')
        d.leftAfterSeconds = round((now - d.decidedAt) / 1000);
      const nextEscalation = row.escalations.length > 1 ? row.escalations.at(-1) : null;
      if (TERMINAL.includes(row.status) || (row.status === 'AWAITING_DECISION' && nextEscalation)) {
        d.leftAfterSeconds ??= round((now - d.decidedAt) / 1000);
        d.settledAfterSeconds = round((now - d.decidedAt) / 1000);
        d.state = {
          status: row.status,
          phase: row.phase,
          lastVerdict: row.lastVerdict ?? null,
          nextEscalation: nextEscalation?.trigger ?? null,
        };
      } else {
        d.state = { status: row.status, phase: row.phase };
      }
    }
  }
  for (const d of decided) delete d.decidedAt;
  const afterDecisions = await sample(
    `after deciding ${chosen.length}`,
    await prisma.loop.count({ where: { status: 'AWAITING_DECISION' } }),
  );
  const missesAfter = afterDecisions.stickyCache.misses;

  const disk = {
    workspacesMiB: duMiB(path.join(dataDir, 'workspaces')),
    dataDirMiB: duMiB(dataDir),
    temporalSqliteMiB: duMiB(path.join(tempDir, 'temporal')),
    postgresMiB: duMiB(path.join(tempDir, 'postgres')),
  };
  const parkLatencies = parked.map((p) => p.seconds);
  const result = {
    measuredAt: new Date().toISOString(),
    machine: (({ loadavg: atStart, ...rest }) => ({ ...rest, loadavgAtStart: atStart, loadavgAtEnd: loadavg() }))(
      machineAtStart,
    ),
    settings: {
      n: N,
      concurrency: CONCURRENCY,
      workerMaxCachedWorkflows: CACHE,
      workerNodeOptions: WORKER_NODE_OPTIONS || null,
      sandbox: SANDBOX,
      decide: DECIDE,
      loop: 'requireContractApproval: true, one local fixture repository, maker `true`',
    },
    submission: {
      submitted: nextIndex,
      parked: parked.length,
      endedInstead: ended.length,
      stuck: stuck.length,
      submitErrors: submitErrors.length,
      secondsToSubmitAll: round(submitSeconds),
      secondsToParkAll: round(parkSeconds),
      submittedPerSecond: round(nextIndex / Math.max(submitSeconds, 0.001), 2),
      parkedPerSecond: round(parked.length / parkSeconds, 2),
      submitToParkedSeconds: {
        p50: round(percentile(parkLatencies, 50) ?? 0),
        p95: round(percentile(parkLatencies, 95) ?? 0),
        max: round(Math.max(0, ...parkLatencies)),
      },
      openInDatabaseAfter: openInDb,
    },
    samples,
    decidedSample: {
      approved: decided.filter((d) => d.decisionStatus === 202).length,
      movedOn: decided.filter((d) => d.leftAfterSeconds !== null).length,
      settled: decided.filter((d) => d.settledAfterSeconds !== null).length,
      leftAfterSeconds: spread(decided.map((d) => d.leftAfterSeconds)),
      settledAfterSeconds: spread(decided.map((d) => d.settledAfterSeconds)),
      stickyCacheMissesDuringDecisions: missesBefore != null && missesAfter != null ? missesAfter - missesBefore : null,
      loops: decided,
    },
    disk,
    problems: { ended: ended.slice(0, 50), stuck: stuck.slice(0, 50), submitErrors, workerLogLines: worker.problems() },
  };
  fs.mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  fs.writeFileSync(RESULT_FILE, `${JSON.stringify(result, null, 2)}\n`);

  // ---- summary ----
  const row = (s) =>
    `| ${s.label} | ${s.parked} | ${s.worker?.rssMiB ?? '?'} | ${s.workerHeapUsedMiB ?? '?'} | ${s.stickyCache.size ?? '?'} | ${s.temporalDevServer?.rssMiB ?? '?'} | ${s.postgres?.pssMiB ?? '?'} (${s.postgres?.rssMiB ?? '?'}) | ${s.loadavg[0]} |`;
  console.log(`\n## Parked loops: N=${N}, worker cache ${CACHE}\n`);
  console.log(
    `Machine: ${machineAtStart.cpus} cores (${machineAtStart.cpu}), ${machineAtStart.memoryGiB} GiB, Node ${process.version}; load average ${result.machine.loadavgAtStart.join(' ')} at start, ${result.machine.loadavgAtEnd.join(' ')} at end.\n`,
  );
  console.log(
    '| sample | parked | worker RSS MiB | worker main-thread heap MiB | cached workflows | Temporal dev server RSS MiB | PostgreSQL PSS MiB (RSS sum) | load 1 min |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of samples) console.log(row(s));
  const s = result.submission;
  console.log(
    `\n${s.parked} of ${N} parked in ${s.secondsToParkAll} s (${s.parkedPerSecond} loops/s, ${CONCURRENCY} in flight; submit→parked p50 ${s.submitToParkedSeconds.p50} s, p95 ${s.submitToParkedSeconds.p95} s)` +
      `; ${s.endedInstead} ended instead, ${s.stuck} stuck, ${s.submitErrors} submission errors; worker peak RSS ${afterDecisions.worker?.peakRssMiB ?? '?'} MiB.`,
  );
  const d = result.decidedSample;
  const stateName = (x) =>
    x.state ? `${x.state.status}${x.state.nextEscalation ? ` (${x.state.nextEscalation})` : ''}` : 'unknown';
  const counts = new Map();
  for (const x of decided) counts.set(stateName(x), (counts.get(stateName(x)) ?? 0) + 1);
  const states = [...counts].map(([k, v]) => `${v}× ${k}`).join(', ');
  console.log(
    `Decided the ${chosen.length} earliest parked loops: ${d.approved} approvals accepted, ${d.movedOn} left AWAITING_DECISION (median ${d.leftAfterSeconds?.median ?? '?'} s, slowest ${d.leftAfterSeconds?.max ?? '?'} s after its approval), ${d.settled} reached their next state (median ${d.settledAfterSeconds?.median ?? '?'} s): ${states}; sticky-cache misses meanwhile: ${d.stickyCacheMissesDuringDecisions ?? '?'}.`,
  );
  console.log(
    `Disk: workspaces ${disk.workspacesMiB} MiB, Temporal SQLite ${disk.temporalSqliteMiB} MiB, PostgreSQL ${disk.postgresMiB} MiB. Worker log lines with error/warn: ${result.problems.workerLogLines.count}.`,
  );
  const slow = result.problems.workerLogLines.slowWorkflowTasks;
  if (slow)
    console.log(
      `Workflow tasks over 5 s (Temporal SDK warning TMPRL1104): ${slow.count}, median ${slow.medianMs} ms, max ${slow.maxMs} ms.`,
    );
  for (const g of result.problems.workerLogLines.kinds)
    console.log(`  worker log ×${g.count}: ${g.example.slice(0, 240)}`);
  console.log(`Written to ${fileURLToPath(RESULT_FILE)}`);
}

await cleanup.main(main);
