// Orchestration overhead: a loop of 3 iterations (maker sleeps 1 s, one gate sleeps 1 s, the reviewer
// answers at once with a blocker for iterations 1–2 and a clean ledger for 3) from POST to PASSED, against
// a plain Node script doing the same steps itself (bench/lib/plain-loop.mjs). Repetitions interleaved, so
// load from elsewhere hits both alike; one warm-up of each first (not counted). Every run starts on a quiet
// machine (lib/settle.mjs): the run before it leaves dirty pages that the kernel writes back meanwhile, and
// the service's side, which commits to Postgres durably at every step, waits for that writeback far more
// than the plain script does. The disk's own latency during each service run is recorded beside it. The service's time is broken down from its
// Temporal history.
//
// Run after `npm run build`: `npm run bench -- overhead`. Settings (environment): OVERHEAD_REPETITIONS (3),
// OVERHEAD_MAKER_SECONDS (1), OVERHEAD_GATE_SECONDS (1), BENCH_SANDBOX (bwrap). Writes bench/results/overhead.json
// (overhead-sandbox-none.json with BENCH_SANDBOX=none).
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCleanup } from './lib/cleanup.mjs';
import { requireBuilt } from './lib/dist.mjs';
import { averageBreakdown, fetchLoopHistory, historySize, historyTimings } from './lib/history.mjs';
import { benchLoopBody } from './lib/loop-body.mjs';
import { plainLoop } from './lib/plain-loop.mjs';
import { startResult, table } from './lib/results.mjs';
import { settle, startDiskProbe } from './lib/settle.mjs';
import { SANDBOX, startStack, submitLoop, waitForLoop } from './lib/stack.mjs';
import { logger, median, positiveInt, round } from './lib/util.mjs';

requireBuilt();
const REPETITIONS = positiveInt(process.env.OVERHEAD_REPETITIONS ?? 3, 'OVERHEAD_REPETITIONS');
const MAKER_SECONDS = positiveInt(process.env.OVERHEAD_MAKER_SECONDS ?? 1, 'OVERHEAD_MAKER_SECONDS');
const GATE_SECONDS = positiveInt(process.env.OVERHEAD_GATE_SECONDS ?? 1, 'OVERHEAD_GATE_SECONDS');
const ITERATIONS = 3;
const log = logger('overhead');
const cleanup = createCleanup('overhead');

await cleanup.main(async () => {
  // Another sandbox setting is another measurement: it does not replace the default's result.
  const result = startResult(SANDBOX === 'bwrap' ? 'overhead' : `overhead-sandbox-${SANDBOX}`);
  log(
    `${REPETITIONS} repetitions, maker ${MAKER_SECONDS} s, gate ${GATE_SECONDS} s, sandbox ${SANDBOX}; load ${result.loadAtStart.join(' ')}`,
  );
  const stack = await startStack('overhead', cleanup, { passAt: ITERATIONS });
  const body = benchLoopBody(stack.repo, {
    makerSeconds: MAKER_SECONDS,
    gateSeconds: GATE_SECONDS,
    maxIterations: ITERATIONS,
  });
  const plainDir = path.join(stack.tempDir, 'plain');
  fs.mkdirSync(plainDir);

  const settles = [];
  async function quiet(before) {
    const settled = await settle(stack.tempDir);
    settles.push({ before, ...settled });
    if (!settled.settled)
      log(`not quiet before the ${before} run after ${settled.seconds} s: ${JSON.stringify(settled.lastWindow)}`);
  }

  async function serviceRun() {
    await quiet('service');
    const diskProbe = await startDiskProbe(stack.tempDir);
    const started = performance.now();
    const id = await submitLoop(stack, body);
    const loop = await waitForLoop(stack, id);
    const seconds = (loop.endedAt - started) / 1000;
    const disk = await diskProbe();
    const iterations = await stack.prisma.iteration.count({ where: { loopId: id } });
    if (loop.status !== 'PASSED' || iterations !== ITERATIONS) {
      throw new Error(
        `loop ${id} ended ${loop.status} after ${iterations} iteration(s), not PASSED after ${ITERATIONS}: ${loop.failureReason ?? ''}`,
      );
    }
    const history = await fetchLoopHistory(stack.temporal, id);
    return { id, seconds, disk, timings: historyTimings(history), size: historySize(history) };
  }
  async function plainRun() {
    await quiet('plain');
    const started = performance.now();
    const iterations = await plainLoop({
      repo: stack.repo,
      workDir: plainDir,
      llmBaseUrl: stack.llm.baseUrl,
      makerSeconds: MAKER_SECONDS,
      gateSeconds: GATE_SECONDS,
      maxIterations: ITERATIONS,
    });
    if (iterations !== ITERATIONS) throw new Error(`the plain script took ${iterations} iterations`);
    return { seconds: (performance.now() - started) / 1000 };
  }

  // Warm-up: the first loop pays for cold caches and lazy compilation in every process.
  const warmUp = { service: (await serviceRun()).seconds, plain: (await plainRun()).seconds };
  log(`warm-up: service ${round(warmUp.service, 2)} s, plain ${round(warmUp.plain, 2)} s`);
  const runs = [];
  for (let i = 0; i < REPETITIONS; i++) {
    // Alternate which goes first, so neither always follows the other's after-effects.
    const serviceFirst = i % 2 === 0;
    const first = serviceFirst ? await serviceRun() : await plainRun();
    const second = serviceFirst ? await plainRun() : await serviceRun();
    const [service, plain] = serviceFirst ? [first, second] : [second, first];
    runs.push({ service, plain, ratio: service.seconds / plain.seconds });
    log(
      `repetition ${i + 1}: service ${round(service.seconds, 2)} s, plain ${round(plain.seconds, 2)} s, ratio ${round(service.seconds / plain.seconds, 2)}`,
    );
  }

  const ratios = runs.map((r) => r.ratio);
  const breakdown = averageBreakdown(runs.map((r) => r.service.timings));
  const figures = {
    warmUp,
    runs: runs.map((r) => ({
      loopId: r.service.id,
      serviceSeconds: round(r.service.seconds, 2),
      plainSeconds: round(r.plain.seconds, 2),
      ratio: round(r.ratio, 3),
      history: r.service.size,
      diskDuringService: r.service.disk,
    })),
    ratio: { median: round(median(ratios), 3), min: round(Math.min(...ratios), 3), max: round(Math.max(...ratios), 3) },
    serviceSeconds: { median: round(median(runs.map((r) => r.service.seconds)), 2) },
    plainSeconds: { median: round(median(runs.map((r) => r.plain.seconds)), 2) },
    breakdown,
    settles: {
      runs: settles.length,
      notQuiet: settles.filter((s) => !s.settled).length,
      maxSeconds: Math.max(...settles.map((s) => s.seconds)),
    },
    workerLog: stack.workerProblems(),
  };
  const f = figures;
  const known = { runMaker: ITERATIONS * MAKER_SECONDS * 1000, runVerification: ITERATIONS * GATE_SECONDS * 1000 };
  result.write(
    {
      repetitions: REPETITIONS,
      iterations: ITERATIONS,
      makerSeconds: MAKER_SECONDS,
      gateSeconds: GATE_SECONDS,
      sandbox: SANDBOX,
      plainScriptSandbox: 'none',
    },
    figures,
    [
      `**Overhead: ${f.ratio.median}× (${f.ratio.min}–${f.ratio.max})** — a ${ITERATIONS}-iteration loop (maker sleeps ${MAKER_SECONDS} s, one gate sleeps ${GATE_SECONDS} s, reviewer answers at once) ` +
        `takes ${f.serviceSeconds.median} s from POST to PASSED (median of ${REPETITIONS}), the plain script ${f.plainSeconds.median} s. Sandbox: ${SANDBOX} (the plain script runs unsandboxed).`,
      '',
      `Each run started on a quiet machine (\`sync\`, then 1 s of CPU under 10 %, I/O wait under 2 % and synced 4 KB writes under 30 ms; ` +
        `${f.settles.notQuiet} of ${f.settles.runs} runs started without it after the 60 s limit, the longest wait ${f.settles.maxSeconds} s). ` +
        'The last column: a synced 4 KB write every 100 ms during the service run, which every Postgres commit of the loop waits for at least.',
      '',
      ...table(
        ['repetition', 'service s', 'plain s', 'ratio', 'disk during the service run: synced write p50 / p99 / max ms'],
        f.runs.map((r, i) => [
          i + 1,
          r.serviceSeconds,
          r.plainSeconds,
          r.ratio,
          `${r.diskDuringService.p50Ms} / ${r.diskDuringService.p99Ms} / ${r.diskDuringService.maxMs}`,
        ]),
      ),
      '',
      `Where the service's time goes (mean per loop, from its history; run ${breakdown.totalMs} ms from start to close): ` +
        `${breakdown.workflowTasks.count} workflow tasks — dispatch ${breakdown.workflowTasks.dispatchMs} ms, processing ${breakdown.workflowTasks.processingMs} ms; ` +
        `${breakdown.localActivities} local activities (inside those tasks); activity dispatch (schedule-to-start) ${breakdown.activityDispatchMs} ms in all.`,
      '',
      ...table(
        [
          'activity',
          'count',
          'schedule-to-start ms',
          'running ms',
          'of which the fake maker/gate sleeps',
          'running besides them ms',
        ],
        Object.entries(breakdown.activities).map(([name, a]) => [
          name,
          a.count,
          a.scheduleToStartMs,
          a.runMs,
          known[name] ?? 0,
          round(a.runMs - (known[name] ?? 0), 0),
        ]),
      ),
    ],
  );
});
