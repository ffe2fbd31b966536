// Concurrency: N one-iteration loops (maker sleeps 2 s, one gate sleeps 1 s, clean review) submitted at
// once, for each N on a fresh service: total time, loops/min, loops not PASSED, peak and final memory of
// each process (API, worker: RSS; Temporal dev server, PostgreSQL: PSS of the process tree) sampled every
// second, and how long runMaker waited for a worker slot (schedule-to-start, from the histories).
//
// Run after `npm run build`: `npm run bench -- concurrency`. Settings (environment): CONCURRENCY_SIZES
// ("10,50,200"), CONCURRENCY_MAKER_SECONDS (2), CONCURRENCY_GATE_SECONDS (1), CONCURRENCY_TIMEOUT_SECONDS
// (1800, per size), BENCH_SANDBOX (bwrap). Writes bench/results/concurrency.json.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createCleanup } from './lib/cleanup.mjs';
import { requireBuilt } from './lib/dist.mjs';
import { fetchLoopHistory, historyTimings } from './lib/history.mjs';
import { benchLoopBody } from './lib/loop-body.mjs';
import { startCpuAccount, startMemorySampler } from './lib/proc.mjs';
import { startResult, table } from './lib/results.mjs';
import {
  HEAVY_ROLE,
  LOOP_ROLE,
  SANDBOX,
  startStack,
  submitLoop,
  waitForLoop,
  WORKER_ROLES,
  WORKERS,
} from './lib/stack.mjs';
import { logger, percentile, positiveInt, positiveList, round } from './lib/util.mjs';

requireBuilt();
const SIZES = positiveList(process.env.CONCURRENCY_SIZES ?? '10,50,200', 'CONCURRENCY_SIZES');
const MAKER_SECONDS = positiveInt(process.env.CONCURRENCY_MAKER_SECONDS ?? 2, 'CONCURRENCY_MAKER_SECONDS');
const GATE_SECONDS = positiveInt(process.env.CONCURRENCY_GATE_SECONDS ?? 1, 'CONCURRENCY_GATE_SECONDS');
const TIMEOUT_MS = positiveInt(process.env.CONCURRENCY_TIMEOUT_SECONDS ?? 1800, 'CONCURRENCY_TIMEOUT_SECONDS') * 1000;
const log = logger('concurrency');
const cleanup = createCleanup('concurrency');

async function runSize(n) {
  const stack = await startStack(`concurrency-${n}`, cleanup);
  const sampler = startMemorySampler({
    single: {
      api: stack.api.pid,
      ...Object.fromEntries(WORKER_ROLES.map((role) => [`${role} worker`, stack.workers[role].pid])),
    },
    trees: { temporal: stack.pids.temporal, postgres: stack.pids.postgres },
  });
  const body = benchLoopBody(stack.repo, { makerSeconds: MAKER_SECONDS, gateSeconds: GATE_SECONDS, maxIterations: 1 });
  // How busy the cores were meanwhile: are they the limit, or is something else?
  const cpu = startCpuAccount();
  const started = performance.now();
  // All at once: N POSTs in flight together.
  const submitted = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => submitLoop(stack, body, `bench-concurrency-${i}`)),
  );
  const ids = submitted.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  const submitErrors = submitted
    .filter((s) => s.status === 'rejected')
    .map((s) => String(s.reason?.message ?? s.reason).slice(0, 300));
  const submitSeconds = (performance.now() - started) / 1000;
  log(`N=${n}: ${ids.length} submitted in ${round(submitSeconds)} s (${submitErrors.length} refused); waiting`);

  let timer;
  const deadline = new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), TIMEOUT_MS)));
  const outcomes = await Promise.all(
    ids.map((id) =>
      Promise.race([waitForLoop(stack, id), deadline]).then((o) => (o === 'timeout' ? { id, status: 'NOT_DONE' } : o)),
    ),
  );
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  const memory = sampler.stop();
  const used = cpu();
  const notPassed = outcomes.filter((o) => o.status !== 'PASSED');

  // How long runMaker waited for a slot on the worker, per loop.
  const makerWaitsMs = [];
  for (const id of ids) {
    const timings = historyTimings(await fetchLoopHistory(stack.temporal, id));
    makerWaitsMs.push(...(timings.activities.runMaker?.scheduleToStartMs ?? []));
  }
  const figures = {
    n,
    seconds: round(seconds),
    submitSeconds: round(submitSeconds, 2),
    loopsPerMinute: round((ids.length / seconds) * 60),
    passed: outcomes.length - notPassed.length,
    notPassed: notPassed.length,
    notPassedExamples: notPassed.slice(0, 10),
    submitErrors: submitErrors.slice(0, 10),
    runMakerScheduleToStartMs: {
      p50: round(percentile(makerWaitsMs, 50), 0),
      max: round(Math.max(0, ...makerWaitsMs), 0),
    },
    memoryMiB: memory.processes,
    cpu: { ...used, benchShareOfMachine: round(used.benchCoreSeconds / (used.seconds * os.cpus().length), 2) },
    workerLog: stack.workerProblems(),
  };
  log(
    `N=${n}: ${figures.passed} PASSED in ${figures.seconds} s (${figures.loopsPerMinute} loops/min); loop worker peak ${memory.processes[`${LOOP_ROLE} worker`].peak} MiB, heavy-activity worker peak ${memory.processes[`${HEAVY_ROLE} worker`].peak} MiB, runMaker waited up to ${figures.runMakerScheduleToStartMs.max} ms`,
  );
  await cleanup.stopAll();
  return figures;
}

await cleanup.main(async () => {
  const result = startResult('concurrency');
  log(
    `sizes ${SIZES.join(', ')}, maker ${MAKER_SECONDS} s, gate ${GATE_SECONDS} s, sandbox ${SANDBOX}; load ${result.loadAtStart.join(' ')}`,
  );
  const sizes = [];
  for (const n of SIZES) sizes.push(await runSize(n));
  const mem = (s, name) => `${s.memoryMiB[name]?.peak ?? '?'} / ${s.memoryMiB[name]?.final ?? '?'}`;
  result.write(
    {
      sizes: SIZES,
      makerSeconds: MAKER_SECONDS,
      gateSeconds: GATE_SECONDS,
      iterations: 1,
      sandbox: SANDBOX,
      workers: WORKERS,
      memorySampledEverySeconds: 1,
    },
    { sizes },
    [
      `**Concurrency**: N one-iteration loops (maker sleeps ${MAKER_SECONDS} s, gate ${GATE_SECONDS} s) submitted at once, a fresh service per N (API and workers as separate processes, workers ${WORKERS}${WORKERS === 'split' ? ': one for loops and record writes, one for makers, gates, reviews and git' : ''}, default activity concurrency, sandbox ${SANDBOX}). ` +
        "CPU used: the share of all cores the service and its makers and gates took from the first POST to the last loop's end (other work on the machine in core-seconds). " +
        'Memory in MiB, peak / final (when the last loop ended): RSS of the API and worker processes, PSS of the Temporal dev server and of PostgreSQL (all its processes).',
      '',
      ...table(
        [
          'N',
          'total s',
          'loops/min',
          'not PASSED',
          'runMaker schedule-to-start max (p50) s',
          'CPU used (other work)',
          'API MiB',
          ...WORKER_ROLES.map((role) => `${role} worker MiB`),
          'Temporal MiB',
          'PostgreSQL MiB',
        ],
        sizes.map((s) => [
          s.n,
          s.seconds,
          s.loopsPerMinute,
          s.notPassed + s.submitErrors.length,
          `${round(s.runMakerScheduleToStartMs.max / 1000)} (${round(s.runMakerScheduleToStartMs.p50 / 1000)})`,
          `${Math.round(s.cpu.benchShareOfMachine * 100)} % (${s.cpu.otherCoreSeconds} core-s)`,
          mem(s, 'api'),
          ...WORKER_ROLES.map((role) => mem(s, `${role} worker`)),
          mem(s, 'temporal'),
          mem(s, 'postgres'),
        ]),
      ),
    ],
  );
});
