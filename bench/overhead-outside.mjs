// Orchestration overhead measured the way an outsider would (issue 30): the same 3-iteration loop as
// overhead.mjs (maker sleeps 1 s, one gate sleeps 1 s, the reviewer answers at once), but
//   - nothing waits for the machine or the disk to settle between runs;
//   - the plain script is the plainest there is: the maker's and the gate's commands, three times, no git
//     and no model call (about 6 s). Beside it, for the issue's own description of the benchmark ("a plain
//     script doing the same steps"), the script overhead.mjs measures against: clone, and per iteration the
//     maker, git add + commit, the gate, the diff and the review call (plain-loop.mjs);
//   - the loop's end is seen as a user sees it: its event stream (GET /v1/loops/:id/events, what the CLI's
//     `watch` follows) and, beside it, GET /v1/loops/:id polled every OUTSIDE_POLL_MS — not Temporal's result.
// Repetitions interleaved (the order rotating), one warm-up of each first. Every service run is broken down
// on one clock (epoch ms): POST answered, workflow started (its history), PASSED written (the loop's row),
// workflow closed, and when each observer saw the end.
//
// Run after `npm run build`: `npm run bench -- overhead-outside` (also part of the default `npm run bench`).
// Settings (environment): OUTSIDE_REPETITIONS (5), OUTSIDE_POLL_MS (250), BENCH_SANDBOX (bwrap).
// Writes bench/results/overhead-outside.json.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createCleanup } from './lib/cleanup.mjs';
import { requireBuilt } from './lib/dist.mjs';
import { averageBreakdown, fetchLoopHistory, historyTimings } from './lib/history.mjs';
import { benchLoopBody, gateArgv, makerArgv } from './lib/loop-body.mjs';
import { plainLoop } from './lib/plain-loop.mjs';
import { startResult, table } from './lib/results.mjs';
import { SANDBOX, startStack, submitLoop, TERMINAL } from './lib/stack.mjs';
import { treeCpuSeconds } from './lib/proc.mjs';
import { loadavg, logger, median, positiveInt, round, sleep } from './lib/util.mjs';

requireBuilt();
const REPETITIONS = positiveInt(process.env.OUTSIDE_REPETITIONS ?? 5, 'OUTSIDE_REPETITIONS');
const POLL_MS = positiveInt(process.env.OUTSIDE_POLL_MS ?? 250, 'OUTSIDE_POLL_MS');
const ITERATIONS = 3;
const log = logger('overhead-outside');
const cleanup = createCleanup('overhead-outside');
const run = promisify(execFile);

/** The plain script: maker, gate, three times, in a directory of its own. Seconds it took. */
async function plainRun(dir) {
  const started = Date.now();
  for (let sequence = 1; sequence <= ITERATIONS; sequence++) {
    const [maker, ...makerRest] = makerArgv(1);
    await run(maker, makerRest, { cwd: dir, env: { ...process.env, LOOP_SEQUENCE: String(sequence) } });
    const [gate, ...gateRest] = gateArgv(1);
    await run(gate, gateRest, { cwd: dir });
  }
  return { seconds: (Date.now() - started) / 1000 };
}

/** Follows the loop's event stream until its `end` event; resolves with the epoch ms it arrived. */
async function sseEnd(baseUrl, key, id, signal) {
  const res = await fetch(`${baseUrl}/v1/loops/${id}/events`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    signal,
  });
  if (!res.ok) throw new Error(`GET /v1/loops/${id}/events answered ${res.status}`);
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res.body) {
    text += decoder.decode(chunk, { stream: true });
    if (/(^|\n)event: end\n/.test(text)) return Date.now();
    // Only the tail can still hold a frame being cut.
    if (text.length > 65_536) text = text.slice(-1024);
  }
  throw new Error('the event stream ended without an end event');
}

/** Polls GET /v1/loops/:id until its status is terminal; the epoch ms of that answer and the loop. */
async function pollEnd(call, key, id) {
  for (;;) {
    const res = await call('GET', `/v1/loops/${id}`, key);
    if (res.status !== 200) throw new Error(`GET /v1/loops/${id} answered ${res.status}`);
    if (TERMINAL.includes(res.body.status)) return { at: Date.now(), loop: res.body };
    await sleep(POLL_MS);
  }
}

await cleanup.main(async () => {
  const result = startResult('overhead-outside');
  log(`${REPETITIONS} repetitions, poll every ${POLL_MS} ms, sandbox ${SANDBOX}; load ${result.loadAtStart.join(' ')}`);
  const stack = await startStack('overhead-outside', cleanup, { passAt: ITERATIONS });
  const body = benchLoopBody(stack.repo, { makerSeconds: 1, gateSeconds: 1, maxIterations: ITERATIONS });
  const plainDir = path.join(stack.tempDir, 'plain');
  fs.mkdirSync(plainDir);
  const key = stack.keys.submitter;
  const stepsDir = path.join(stack.tempDir, 'same-steps');
  fs.mkdirSync(stepsDir);

  /** The plain script doing the loop's steps (plain-loop.mjs). Seconds it took. */
  async function sameStepsRun() {
    const started = Date.now();
    const iterations = await plainLoop({
      repo: stack.repo,
      workDir: stepsDir,
      llmBaseUrl: stack.llm.baseUrl,
      makerSeconds: 1,
      gateSeconds: 1,
      maxIterations: ITERATIONS,
    });
    if (iterations !== ITERATIONS) throw new Error(`the same-steps script took ${iterations} iterations`);
    return { seconds: (Date.now() - started) / 1000 };
  }

  async function serviceRun() {
    const load = loadavg()[0];
    const posted = Date.now();
    const id = await submitLoop(stack, body);
    const answered = Date.now();
    const abort = new AbortController();
    const [sse, poll] = await Promise.all([
      sseEnd(stack.api.baseUrl, key, id, abort.signal),
      pollEnd(stack.call, key, id),
    ]).finally(() => abort.abort());
    if (poll.loop.status !== 'PASSED')
      throw new Error(`loop ${id} ended ${poll.loop.status}, not PASSED: ${poll.loop.failureReason ?? ''}`);
    const row = await stack.prisma.loop.findUniqueOrThrow({ where: { id }, select: { finishedAt: true } });
    const history = await fetchLoopHistory(stack.temporal, id);
    const eventMs = (e) => Number(e.eventTime.seconds) * 1000 + Math.floor(e.eventTime.nanos / 1e6);
    const since = (ms) => (ms - posted) / 1000;
    return {
      id,
      load,
      sseSeconds: since(sse),
      pollSeconds: since(poll.at),
      // One clock for all: this process's, the service's and Temporal's are the same machine's.
      steps: {
        postAnswered: since(answered),
        workflowStarted: since(eventMs(history.events[0])),
        passedWritten: since(row.finishedAt.getTime()),
        workflowClosed: since(eventMs(history.events.at(-1))),
      },
      timings: historyTimings(history),
    };
  }

  // CPU each of the service's processes used (with what it started), from after the warm-up on.
  const serviceProcesses = {
    api: stack.api.pid,
    ...Object.fromEntries(Object.entries(stack.workers).map(([role, w]) => [`${role} worker`, w.pid])),
    temporal: stack.pids.temporal,
    postgres: stack.pids.postgres,
  };
  const cpuNow = () => Object.fromEntries(Object.entries(serviceProcesses).map(([n, pid]) => [n, treeCpuSeconds(pid)]));

  const warmUp = { service: await serviceRun(), plain: await plainRun(plainDir), sameSteps: await sameStepsRun() };
  const cpuBefore = cpuNow();
  log(
    `warm-up: service ${round(warmUp.service.sseSeconds, 2)} s (stream), plain ${round(warmUp.plain.seconds, 2)} s, ` +
      `same steps ${round(warmUp.sameSteps.seconds, 2)} s`,
  );
  const runs = [];
  const kinds = { service: serviceRun, plain: () => plainRun(plainDir), sameSteps: sameStepsRun };
  for (let i = 0; i < REPETITIONS; i++) {
    // Each kind first, second and third in turn, so none always follows another's after-effects.
    const order = Object.keys(kinds).map((_, k, all) => all[(i + k) % all.length]);
    const measured = {};
    for (const kind of order) measured[kind] = await kinds[kind]();
    const { service, plain, sameSteps } = measured;
    runs.push(measured);
    log(
      `repetition ${i + 1}: service ${round(service.sseSeconds, 2)} s (stream) / ${round(service.pollSeconds, 2)} s (polling), ` +
        `plain ${round(plain.seconds, 2)} s, same steps ${round(sameSteps.seconds, 2)} s; ` +
        `ratio ${round(service.sseSeconds / plain.seconds, 3)} / ${round(service.pollSeconds / plain.seconds, 3)}, ` +
        `to the same steps ${round(service.sseSeconds / sameSteps.seconds, 3)}; load ${service.load}`,
    );
  }

  const cpuAfter = cpuNow();
  const stats = (values) => ({
    median: round(median(values), 3),
    min: round(Math.min(...values), 3),
    max: round(Math.max(...values), 3),
  });
  const meanOf = (pick) => round(runs.reduce((t, r) => t + pick(r), 0) / runs.length, 3);
  const stepNames = ['postAnswered', 'workflowStarted', 'passedWritten', 'workflowClosed'];
  const figures = {
    runs: runs.map((r) => ({
      loopId: r.service.id,
      loadAtStart: r.service.load,
      streamSeconds: round(r.service.sseSeconds, 3),
      pollingSeconds: round(r.service.pollSeconds, 3),
      plainSeconds: round(r.plain.seconds, 3),
      sameStepsSeconds: round(r.sameSteps.seconds, 3),
      steps: Object.fromEntries(stepNames.map((s) => [s, round(r.service.steps[s], 3)])),
      workflowTasks: r.service.timings.workflowTasks,
    })),
    ratio: {
      stream: stats(runs.map((r) => r.service.sseSeconds / r.plain.seconds)),
      polling: stats(runs.map((r) => r.service.pollSeconds / r.plain.seconds)),
      streamToSameSteps: stats(runs.map((r) => r.service.sseSeconds / r.sameSteps.seconds)),
      pollingToSameSteps: stats(runs.map((r) => r.service.pollSeconds / r.sameSteps.seconds)),
    },
    streamSeconds: stats(runs.map((r) => r.service.sseSeconds)),
    pollingSeconds: stats(runs.map((r) => r.service.pollSeconds)),
    plainSeconds: stats(runs.map((r) => r.plain.seconds)),
    sameStepsSeconds: stats(runs.map((r) => r.sameSteps.seconds)),
    meanSteps: Object.fromEntries(stepNames.map((s) => [s, meanOf((r) => r.service.steps[s])])),
    meanObservedAfterPassed: {
      stream: meanOf((r) => r.service.sseSeconds - r.service.steps.passedWritten),
      polling: meanOf((r) => r.service.pollSeconds - r.service.steps.passedWritten),
    },
    breakdown: averageBreakdown(runs.map((r) => r.service.timings)),
    // The plain runs between the loops use none of these processes.
    cpuMsPerLoop: Object.fromEntries(
      Object.keys(cpuBefore).map((n) => [n, Math.round(((cpuAfter[n] - cpuBefore[n]) * 1000) / REPETITIONS)]),
    ),
    workerLog: stack.workerProblems(),
  };
  const f = figures;
  result.write(
    {
      repetitions: REPETITIONS,
      iterations: ITERATIONS,
      makerSeconds: 1,
      gateSeconds: 1,
      pollMs: POLL_MS,
      sandbox: SANDBOX,
    },
    figures,
    [
      `**Overhead seen from outside: ${f.ratio.stream.median}× (${f.ratio.stream.min}–${f.ratio.stream.max}) to the end on the event stream, ` +
        `${f.ratio.polling.median}× (${f.ratio.polling.min}–${f.ratio.polling.max}) polling GET every ${POLL_MS} ms** — ` +
        `the same 3-iteration loop from POST until the client saw PASSED: ${f.streamSeconds.median} s / ${f.pollingSeconds.median} s (median of ${REPETITIONS}), ` +
        `against ${f.plainSeconds.median} s for the maker's and gate's commands run three times in a row (no git, no model). ` +
        `No settling between runs; sandbox ${SANDBOX}; each run's load average beside it.`,
      '',
      `Against a plain script doing the loop's steps (clone; per iteration the maker, git add + commit, the gate, the diff ` +
        `and the review call, as overhead.mjs measures against): **${f.ratio.streamToSameSteps.median}× ` +
        `(${f.ratio.streamToSameSteps.min}–${f.ratio.streamToSameSteps.max}) on the stream, ${f.ratio.pollingToSameSteps.median}× polling**; ` +
        `that script took ${f.sameStepsSeconds.median} s.`,
      '',
      ...table(
        [
          'repetition',
          'load',
          'stream s',
          'polling s',
          'plain s',
          'same steps s',
          'ratio (stream)',
          'to the same steps',
          'POST answered',
          'workflow started',
          'PASSED written',
          'workflow closed',
        ],
        f.runs.map((r, i) => [
          i + 1,
          r.loadAtStart,
          r.streamSeconds,
          r.pollingSeconds,
          r.plainSeconds,
          r.sameStepsSeconds,
          round(r.streamSeconds / r.plainSeconds, 3),
          round(r.streamSeconds / r.sameStepsSeconds, 3),
          ...stepNames.map((s) => r.steps[s]),
        ]),
      ),
      '',
      `The last four columns: seconds after the POST was sent, on one clock. The end reached the stream ${f.meanObservedAfterPassed.stream} s ` +
        `and the poller ${f.meanObservedAfterPassed.polling} s after PASSED was written (mean).`,
      '',
      `Inside the workflow (mean per loop, from its history; ${f.breakdown.totalMs} ms from start to close): ${f.breakdown.workflowTasks.count} workflow tasks, ` +
        `dispatch ${f.breakdown.workflowTasks.dispatchMs} ms, processing ${f.breakdown.workflowTasks.processingMs} ms (${f.breakdown.localActivities} local activities inside); ` +
        `activity dispatch ${f.breakdown.activityDispatchMs} ms.`,
      '',
      `CPU per loop by process (with what each started; mean of the repetitions): ` +
        `${Object.entries(f.cpuMsPerLoop)
          .map(([n, ms]) => `${n} ${ms} ms`)
          .join(', ')}.`,
      '',
      ...table(
        ['activity', 'count', 'schedule-to-start ms', 'running ms', 'running besides the 1 s sleeps ms'],
        Object.entries(f.breakdown.activities).map(([name, a]) => [
          name,
          a.count,
          a.scheduleToStartMs,
          a.runMs,
          a.runMs - (['runMaker', 'runVerification'].includes(name) ? a.count * 1000 : 0),
        ]),
      ),
    ],
  );
});
