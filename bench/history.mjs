// History size: events and payload bytes per iteration of the overhead bench's loop (3 iterations, maker
// and gate sleep 1 s, the reviewer blocks twice), and of the same loop whose gate prints 50 MB of log —
// which must add nothing: output lives in PostgreSQL, the history keeps ids and one-line summaries.
//
// Run after `npm run build`: `npm run bench -- history`. Settings (environment): HISTORY_GATE_LOG_MB (50),
// BENCH_SANDBOX (bwrap). Writes bench/results/history.json.
import { createCleanup } from './lib/cleanup.mjs';
import { requireBuilt } from './lib/dist.mjs';
import { fetchLoopHistory, historySize, historyTimings } from './lib/history.mjs';
import { benchLoopBody } from './lib/loop-body.mjs';
import { startResult, table } from './lib/results.mjs';
import { SANDBOX, startStack, submitLoop, waitForLoop } from './lib/stack.mjs';
import { logger, positiveInt, round } from './lib/util.mjs';

requireBuilt();
const LOG_MB = positiveInt(process.env.HISTORY_GATE_LOG_MB ?? 50, 'HISTORY_GATE_LOG_MB');
const ITERATIONS = 3;
const log = logger('history');
const cleanup = createCleanup('history');

await cleanup.main(async () => {
  const result = startResult('history');
  log(
    `a ${ITERATIONS}-iteration loop, then the same with a ${LOG_MB} MB gate log; sandbox ${SANDBOX}; load ${result.loadAtStart.join(' ')}`,
  );
  const stack = await startStack('history', cleanup, { passAt: ITERATIONS });
  const variants = [
    { name: 'overhead loop', gateLogBytes: 0 },
    { name: `gate printing ${LOG_MB} MB`, gateLogBytes: LOG_MB * 1024 * 1024 },
  ];
  const loops = [];
  for (const v of variants) {
    const id = await submitLoop(
      stack,
      benchLoopBody(stack.repo, { maxIterations: ITERATIONS, gateLogBytes: v.gateLogBytes }),
    );
    const loop = await waitForLoop(stack, id);
    const iterations = await stack.prisma.iteration.count({ where: { loopId: id } });
    if (loop.status !== 'PASSED')
      throw new Error(`loop ${id} (${v.name}) ended ${loop.status}: ${loop.failureReason ?? ''}`);
    const history = await fetchLoopHistory(stack.temporal, id);
    const size = historySize(history);
    const timings = historyTimings(history);
    const verifyMs = timings.activities.runVerification?.runMs ?? [];
    loops.push({
      variant: v.name,
      loopId: id,
      iterations,
      ...size,
      perIteration: {
        events: round(size.events / iterations),
        payloadBytes: Math.round(size.payloadBytes / iterations),
        encodedBytes: Math.round(size.encodedBytes / iterations),
      },
      runVerificationMeanMs: round(verifyMs.reduce((a, b) => a + b, 0) / Math.max(1, verifyMs.length), 0),
    });
    log(
      `${v.name}: ${size.events} events, ${size.payloadBytes} payload bytes, ${size.encodedBytes} bytes encoded, ${iterations} iterations`,
    );
  }
  result.write({ iterations: ITERATIONS, gateLogMB: LOG_MB, sandbox: SANDBOX }, { loops }, [
    `**History size** of a ${ITERATIONS}-iteration loop (the overhead bench's), and of the same loop with a gate printing ${LOG_MB} MB; ` +
      'payload bytes: the data of every payload in the history (inputs, results, search attributes, markers); encoded: the whole history as Temporal stores it.',
    '',
    ...table(
      [
        'loop',
        'iterations',
        'events',
        'payload bytes',
        'encoded bytes',
        'per iteration: events / payload bytes',
        'runVerification mean ms',
      ],
      loops.map((l) => [
        l.variant,
        l.iterations,
        l.events,
        l.payloadBytes,
        l.encodedBytes,
        `${l.perIteration.events} / ${l.perIteration.payloadBytes}`,
        l.runVerificationMeanMs,
      ]),
    ),
  ]);
});
