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
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const dist = (file) => new URL(`../dist/${file}`, import.meta.url);
if (!fs.existsSync(dist('service/worker-main.js')) || !fs.existsSync(dist('api/app.js'))) {
  console.error('dist/ is missing: run `npm run build` first');
  process.exit(1);
}
// dist is CommonJS: its exports arrive as the default export.
const { default: { startEmbeddedPostgres } } = await import(dist('service/embedded-postgres.js').href);
const { default: { startTemporalDevServer, resolveTemporalCli } } = await import(dist('service/temporal-dev-server.js').href);
const { default: { applyMigrations } } = await import(dist('service/migrate.js').href);
const { default: { buildApp } } = await import(dist('api/app.js').href);
const { default: { createApiKey } } = await import(dist('api/auth/api-keys.js').href);
const { default: { createPrismaClient } } = await import(dist('prisma/client.js').href);
const { Client, Connection } = await import('@temporalio/client');

const positive = (value, name) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer (got ${value})`);
  return n;
};
const N = positive(process.argv[2] ?? process.env.PARKED_LOOPS ?? 2000, 'N');
const CONCURRENCY = positive(process.env.PARKED_CONCURRENCY ?? 20, 'PARKED_CONCURRENCY');
const DECIDE = Math.min(N, positive(process.env.PARKED_DECIDE ?? 20, 'PARKED_DECIDE'));
const CACHE = Number(process.env.WORKER_MAX_CACHED_WORKFLOWS ?? 200);
const SANDBOX = process.env.SANDBOX ?? 'bwrap';
/** Node options for the worker only, e.g. `--max-old-space-size=512` to see what the parked loops really need. */
const WORKER_NODE_OPTIONS = process.env.PARKED_WORKER_NODE_OPTIONS ?? '';
const STUCK_MS = positive(process.env.PARKED_STUCK_SECONDS ?? 600, 'PARKED_STUCK_SECONDS') * 1000;
const SAMPLE_EVERY = Math.max(1, Math.ceil(N / 10));
const DECIDED_TIMEOUT_MS = 10 * 60_000;
const TERMINAL = ['PASSED', 'APPROVED', 'REJECTED', 'CANCELLED', 'FAILED'];
const RESULT_FILE = new URL(
  `./results/${process.env.PARKED_RESULT_NAME ?? (CACHE === 200 && !WORKER_NODE_OPTIONS ? 'parked-loops' : `parked-loops-cache${CACHE}`)}.json`,
  import.meta.url,
);

const log = (line) => console.log(`[bench:parked ${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (kb) => (kb == null ? null : Number((kb / 1024).toFixed(1)));
const round = (n, digits = 1) => Number(n.toFixed(digits));

// ---- clean-up: everything started is stopped in reverse order, on success, failure and Ctrl-C ----------
const cleanups = [];
let cleaning = null;
function cleanUp() {
  cleaning ??= (async () => {
    for (const { name, stop } of cleanups.reverse()) {
      await Promise.race([stop(), sleep(30_000).then(() => { throw new Error('timed out'); })]).catch((err) =>
        console.error(`[bench:parked] stopping ${name} failed: ${err?.message ?? err}`),
      );
    }
  })();
  return cleaning;
}
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    log(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

// ---- memory of processes, from /proc ----------------------------------------------------------------------
function statusKb(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return null;
  }
}
function pssKb(pid) {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+) kB/m)?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}
function allProcesses() {
  const list = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      list.push({ pid: Number(entry), ppid, cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // Gone meanwhile.
    }
  }
  return list;
}
/** A process and all its descendants. */
function tree(rootPid, processes = allProcesses()) {
  const pids = [rootPid];
  for (let i = 0; i < pids.length; i++) for (const p of processes) if (p.ppid === pids[i]) pids.push(p.pid);
  return pids;
}
/** RSS of one process; for a tree also the sum of RSS (double-counts shared memory) and of PSS (does not). */
function memoryOf(pids) {
  const one = pids.map((pid) => ({ pid, ...statusKb(pid), pss: pssKb(pid) })).filter((p) => p.rss != null && !Number.isNaN(p.rss));
  if (one.length === 0) return null;
  const sum = (key) => one.reduce((total, p) => total + (Number.isNaN(p[key]) ? 0 : p[key]), 0);
  return { processes: one.length, rssMiB: mib(sum('rss')), pssMiB: mib(sum('pss')), peakRssMiB: mib(sum('hwm')) };
}

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
  const values = [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'gm'))].map((m) => Number(m[1]));
  if (values.length === 0) return counter ? 0 : null;
  return values.reduce((a, b) => a + b, 0);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function machine() {
  return {
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryGiB: round(os.totalmem() / 1024 ** 3),
    availableMemoryGiB: round(os.freemem() / 1024 ** 3),
    loadavg: os.loadavg().map((l) => round(l, 2)),
  };
}

function duMiB(dir) {
  try {
    return mib(Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]));
  } catch {
    return null;
  }
}

function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Median and largest of the values that are there. */
function spread(values) {
  const present = values.filter((v) => v != null);
  return present.length ? { median: percentile(present, 50), max: Math.max(...present) } : null;
}

// ---- the pieces -------------------------------------------------------------------------------------------
/** A tiny Node project in git, the same shape as the tests' fixture; every loop clones it. */
function createFixtureRepo(dir) {
  const write = (file, content) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  };
  write('package.json', JSON.stringify({ name: 'fixture', version: '1.0.0', scripts: { test: 'node --test' } }, null, 2));
  write('src/sum.js', 'exports.sum = (a, b) => a - b;\n');
  write('test/sum.test.js', "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum');\ntest('sum adds two numbers', () => assert.strictEqual(sum(2, 3), 5));\n");
  const git = (...args) => execFileSync('git', ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.invalid', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '--all');
  git('commit', '--quiet', '-m', 'fixture: initial');
  return dir;
}

/** An OpenAI-compatible endpoint whose reviewer finds nothing, for the loops decided at the end. */
async function startFakeLlm() {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        // Answered all the same.
      }
      const triage = body.messages?.[0]?.content?.startsWith('You triage') ?? false;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'chatcmpl-bench',
          object: 'chat.completion',
          created: 1700000000,
          model: body.model ?? 'bench',
          choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(triage ? { decisions: [] } : { findings: [] }) }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
        }),
      );
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${server.address().port}/v1`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The worker as its own process (dist/service/worker-main.js), so its memory is its own. */
async function startWorker(env) {
  const child = spawn(process.execPath, [fileURLToPath(dist('service/worker-main.js'))], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail = [];
  // Warnings and errors, grouped by what they say (ids, numbers and colours taken out), with examples.
  const problems = new Map();
  const slowTasksMs = [];
  let ready = false;
  const onLine = (raw) => {
    const line = raw.replace(/\x1b\[[0-9;]*m/g, '');
    if (!line.trim()) return;
    tail.push(line);
    if (tail.length > 100) tail.shift();
    if (line.includes('worker ready')) ready = true;
    if (/error|fail|warn|exception|out of memory/i.test(line)) {
      const duration = line.match(/workflow_task_duration=(\d+)/);
      if (duration) slowTasksMs.push(Number(duration[1]));
      const kind = line
        .replace(/^\S+Z\s+/, '')
        .replace(/[0-9a-f]{8}-[0-9a-f-]{27}[^\s]*/g, '<id>')
        .replace(/\d+/g, '#')
        .slice(0, 160);
      const group = problems.get(kind) ?? { count: 0, example: line.slice(0, 600) };
      group.count += 1;
      problems.set(kind, group);
    }
  };
  let partial = '';
  const onData = (chunk) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop();
    lines.forEach(onLine);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let exit = null;
  void exited.then((e) => (exit = e));
  const deadline = Date.now() + 120_000;
  while (!ready) {
    if (exit) throw new Error(`the worker exited during start-up (${JSON.stringify(exit)}):\n${tail.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`the worker did not get ready in 120 s:\n${tail.join('\n')}`);
    await sleep(100);
  }
  return {
    pid: child.pid,
    exit: () => exit,
    tail: () => tail.slice(),
    problems: () => ({
      count: [...problems.values()].reduce((total, g) => total + g.count, 0),
      slowWorkflowTasks: slowTasksMs.length
        ? { count: slowTasksMs.length, medianMs: percentile(slowTasksMs, 50), maxMs: Math.max(...slowTasksMs) }
        : null,
      kinds: [...problems.values()].sort((a, b) => b.count - a.count).slice(0, 20),
    }),
    stop: async () => {
      if (exit) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---- the run ----------------------------------------------------------------------------------------------
async function main() {
  const machineAtStart = machine();
  log(`N=${N}, ${CONCURRENCY} in flight, worker cache ${CACHE}, sandbox ${SANDBOX}; ${machineAtStart.cpus} cores, load ${machineAtStart.loadavg.join(' ')}`);
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-parked-'));
  cleanups.push({ name: 'temp dir', stop: async () => fs.rmSync(tempDir, { recursive: true, force: true }) });

  const [pgPort, temporalPort, uiPort, metricsPort, sdkMetricsPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const postgres = await startEmbeddedPostgres({ dataDir: tempDir, port: pgPort });
  cleanups.push({ name: 'PostgreSQL', stop: () => postgres.stop() });
  const postmasterPid = Number(fs.readFileSync(path.join(tempDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  await applyMigrations(postgres.databaseUrl);
  const temporalServer = await startTemporalDevServer({
    cliPath: resolveTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } }),
    dataDir: tempDir,
    port: temporalPort,
    uiPort,
    namespace: 'default',
  });
  cleanups.push({ name: 'Temporal dev server', stop: () => temporalServer.stop() });
  const sqlite = path.join(tempDir, 'temporal', 'temporal.sqlite');
  const temporalPid = allProcesses().find((p) => p.cmdline.includes(sqlite) && p.cmdline.includes('start-dev'))?.pid;
  if (!temporalPid) throw new Error('cannot find the Temporal dev server process');
  const llm = await startFakeLlm();
  cleanups.push({ name: 'fake LLM', stop: () => llm.close() });
  const repo = path.join(tempDir, 'fixture');
  fs.mkdirSync(repo);
  createFixtureRepo(repo);
  const dataDir = path.join(tempDir, 'data');
  fs.mkdirSync(dataDir);

  const taskQueue = 'bench-parked';
  const worker = await startWorker({
    DATABASE_URL: postgres.databaseUrl,
    TEMPORAL_ADDRESS: temporalServer.address,
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
  cleanups.push({ name: 'worker', stop: () => worker.stop() });
  log(`worker pid ${worker.pid}, Temporal dev server pid ${temporalPid}, PostgreSQL postmaster pid ${postmasterPid}`);

  const prisma = createPrismaClient(postgres.databaseUrl);
  cleanups.push({ name: 'database client', stop: () => prisma.$disconnect() });
  const connection = await Connection.connect({ address: temporalServer.address });
  cleanups.push({ name: 'Temporal client', stop: () => connection.close() });
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
  cleanups.push({ name: 'API', stop: () => app.close() });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const keys = {
    submitter: (await createApiKey(prisma, { name: 'bench-submitter', role: 'submitter' })).key,
    approver: (await createApiKey(prisma, { name: 'bench-approver', role: 'approver' })).key,
  };
  const api = async (method, url, key, body, headers = {}) => {
    const res = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  };

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
      worker: workerMemory ? { rssMiB: mib(workerMemory.rss), peakRssMiB: mib(workerMemory.hwm), pssMiB: mib(pssKb(worker.pid)) } : null,
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
      loadavg: os.loadavg().map((l) => round(l, 2)),
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
        const res = await api('POST', '/v1/loops', keys.submitter, loopBody, { 'idempotency-key': `bench-parked-${index}` }).catch((err) => ({ status: 0, body: String(err?.message ?? err) }));
        if (res.status === 201 || res.status === 200) {
          inflight.set(res.body.id, { index, submittedAt: performance.now() });
          lastSubmittedAt = performance.now();
          return;
        }
        if (submitErrors.length < 50) submitErrors.push({ index, attempt, status: res.status, body: typeof res.body === 'string' ? res.body.slice(0, 300) : res.body });
        if (attempt >= 5) throw new Error(`submitting loop ${index} failed 5 times; last: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        await sleep(1000 * attempt);
      }
    } finally {
      posting -= 1;
    }
  }

  let failure = null;
  while (parked.length + ended.length + stuck.length < N) {
    if (failure) throw failure;
    if (worker.exit()) throw new Error(`the worker exited (${JSON.stringify(worker.exit())}) with ${parked.length} loops parked:\n${worker.tail().join('\n')}`);
    while (inflight.size + posting < CONCURRENCY && nextIndex < N) {
      const index = nextIndex++;
      submitOne(index).catch((err) => (failure ??= err));
    }
    await sleep(250);
    if (inflight.size === 0) continue;
    const rows = await prisma.loop.findMany({ where: { id: { in: [...inflight.keys()] } }, select: { id: true, status: true, phase: true, failureReason: true } });
    const now = performance.now();
    for (const row of rows) {
      const entry = inflight.get(row.id);
      if (row.status === 'AWAITING_DECISION') {
        inflight.delete(row.id);
        parked.push({ id: row.id, index: entry.index, seconds: (now - entry.submittedAt) / 1000 });
      } else if (TERMINAL.includes(row.status)) {
        inflight.delete(row.id);
        ended.push({ id: row.id, index: entry.index, status: row.status, phase: row.phase, failureReason: row.failureReason?.slice(0, 500) ?? null });
        log(`loop ${row.id} ended ${row.status} in ${row.phase} instead of parking: ${row.failureReason ?? ''}`);
      } else if (now - entry.submittedAt > STUCK_MS) {
        inflight.delete(row.id);
        stuck.push({ id: row.id, index: entry.index, status: row.status, phase: row.phase, seconds: round((now - entry.submittedAt) / 1000) });
        log(`loop ${row.id} has not parked after ${STUCK_MS / 1000} s (${row.status}/${row.phase})`);
      }
    }
    while (parked.length >= nextSample && nextSample <= N) {
      await sample(`${nextSample} parked`, parked.length);
      nextSample += SAMPLE_EVERY;
    }
    if (performance.now() - lastProgress > 30_000) {
      lastProgress = performance.now();
      log(`${parked.length}/${N} parked, ${inflight.size} in flight, ${ended.length} ended, ${stuck.length} stuck; ${round(parked.length / ((performance.now() - submissionStarted) / 1000), 2)} loops/s`);
    }
  }
  const parkSeconds = (performance.now() - submissionStarted) / 1000;
  const submitSeconds = (lastSubmittedAt - submissionStarted) / 1000;
  if (samples.at(-1).parked !== parked.length) await sample(`${parked.length} parked`, parked.length);
  log(`all ${N} settled in ${round(parkSeconds)} s: ${parked.length} parked, ${ended.length} ended, ${stuck.length} stuck`);

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
      return open ? { id, escalationId: open.id, escalationTrigger: open.trigger } : { id, error: `no open escalation (status ${detail.status}, loop ${detail.body?.status})` };
    }),
  );
  await Promise.all(
    decided
      .filter((d) => d.escalationId)
      .map(async (d) => {
        const res = await api('POST', `/v1/loops/${d.id}/decisions`, keys.approver, { kind: 'approve', escalationId: d.escalationId, comment: 'bench: approved to show a parked loop is alive' });
        Object.assign(d, { decisionStatus: res.status, decidedAt: performance.now(), leftAfterSeconds: null, settledAfterSeconds: null, state: null });
        if (res.status !== 202) d.error = `decision answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`;
      }),
  );
  log(`approved ${decided.filter((d) => d.decisionStatus === 202).length} of the ${chosen.length} earliest parked loops; waiting for them to move on`);
  const decidedDeadline = performance.now() + DECIDED_TIMEOUT_MS;
  for (;;) {
    const waiting = decided.filter((d) => d.decisionStatus === 202 && d.settledAfterSeconds === null);
    if (waiting.length === 0 || performance.now() > decidedDeadline) break;
    await sleep(250);
    const rows = await prisma.loop.findMany({
      where: { id: { in: waiting.map((d) => d.id) } },
      select: { id: true, status: true, phase: true, lastVerdict: true, escalations: { select: { trigger: true, status: true, sequence: true }, orderBy: { sequence: 'asc' } } },
    });
    const now = performance.now();
    for (const row of rows) {
      const d = waiting.find((w) => w.id === row.id);
      // Left: the workflow was replayed, took the decision and recorded it (the escalation is no longer OPEN).
      if (d.leftAfterSeconds === null && row.escalations[0] && row.escalations[0].status !== 'OPEN') d.leftAfterSeconds = round((now - d.decidedAt) / 1000);
      const nextEscalation = row.escalations.length > 1 ? row.escalations.at(-1) : null;
      if (TERMINAL.includes(row.status) || (row.status === 'AWAITING_DECISION' && nextEscalation)) {
        d.leftAfterSeconds ??= round((now - d.decidedAt) / 1000);
        d.settledAfterSeconds = round((now - d.decidedAt) / 1000);
        d.state = { status: row.status, phase: row.phase, lastVerdict: row.lastVerdict ?? null, nextEscalation: nextEscalation?.trigger ?? null };
      } else {
        d.state = { status: row.status, phase: row.phase };
      }
    }
  }
  for (const d of decided) delete d.decidedAt;
  const afterDecisions = await sample(`after deciding ${chosen.length}`, await prisma.loop.count({ where: { status: 'AWAITING_DECISION' } }));
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
    machine: (({ loadavg, ...rest }) => ({ ...rest, loadavgAtStart: loadavg, loadavgAtEnd: os.loadavg().map((l) => round(l, 2)) }))(machineAtStart),
    settings: { n: N, concurrency: CONCURRENCY, workerMaxCachedWorkflows: CACHE, workerNodeOptions: WORKER_NODE_OPTIONS || null, sandbox: SANDBOX, decide: DECIDE, loop: 'requireContractApproval: true, one local fixture repository, maker `true`' },
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
      submitToParkedSeconds: { p50: round(percentile(parkLatencies, 50) ?? 0), p95: round(percentile(parkLatencies, 95) ?? 0), max: round(Math.max(0, ...parkLatencies)) },
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
  console.log(`Machine: ${machineAtStart.cpus} cores (${machineAtStart.cpu}), ${machineAtStart.memoryGiB} GiB, Node ${process.version}; load average ${result.machine.loadavgAtStart.join(' ')} at start, ${result.machine.loadavgAtEnd.join(' ')} at end.\n`);
  console.log('| sample | parked | worker RSS MiB | worker main-thread heap MiB | cached workflows | Temporal dev server RSS MiB | PostgreSQL PSS MiB (RSS sum) | load 1 min |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of samples) console.log(row(s));
  const s = result.submission;
  console.log(
    `\n${s.parked} of ${N} parked in ${s.secondsToParkAll} s (${s.parkedPerSecond} loops/s, ${CONCURRENCY} in flight; submit→parked p50 ${s.submitToParkedSeconds.p50} s, p95 ${s.submitToParkedSeconds.p95} s)` +
      `; ${s.endedInstead} ended instead, ${s.stuck} stuck, ${s.submitErrors} submission errors; worker peak RSS ${afterDecisions.worker?.peakRssMiB ?? '?'} MiB.`,
  );
  const d = result.decidedSample;
  const stateName = (x) => (x.state ? `${x.state.status}${x.state.nextEscalation ? ` (${x.state.nextEscalation})` : ''}` : 'unknown');
  const counts = new Map();
  for (const x of decided) counts.set(stateName(x), (counts.get(stateName(x)) ?? 0) + 1);
  const states = [...counts].map(([k, v]) => `${v}× ${k}`).join(', ');
  console.log(
    `Decided the ${chosen.length} earliest parked loops: ${d.approved} approvals accepted, ${d.movedOn} left AWAITING_DECISION (median ${d.leftAfterSeconds?.median ?? '?'} s, slowest ${d.leftAfterSeconds?.max ?? '?'} s after its approval), ${d.settled} reached their next state (median ${d.settledAfterSeconds?.median ?? '?'} s): ${states}; sticky-cache misses meanwhile: ${d.stickyCacheMissesDuringDecisions ?? '?'}.`,
  );
  console.log(`Disk: workspaces ${disk.workspacesMiB} MiB, Temporal SQLite ${disk.temporalSqliteMiB} MiB, PostgreSQL ${disk.postgresMiB} MiB. Worker log lines with error/warn: ${result.problems.workerLogLines.count}.`);
  const slow = result.problems.workerLogLines.slowWorkflowTasks;
  if (slow) console.log(`Workflow tasks over 5 s (Temporal SDK warning TMPRL1104): ${slow.count}, median ${slow.medianMs} ms, max ${slow.maxMs} ms.`);
  for (const g of result.problems.workerLogLines.kinds) console.log(`  worker log ×${g.count}: ${g.example.slice(0, 240)}`);
  console.log(`Written to ${fileURLToPath(RESULT_FILE)}`);
}

try {
  await main();
  await cleanUp();
} catch (err) {
  // Interrupted: the signal handler is cleaning up and exits; what broke was the clean-up itself.
  if (interrupted) await new Promise(() => undefined);
  console.error('[bench:parked] failed:', err?.stack ?? err);
  await cleanUp();
  process.exit(1);
}
