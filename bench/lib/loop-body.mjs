// The loop the benches submit: a fake maker that sleeps and writes a file, one fake gate that sleeps.
// The same commands are what the plain script (plain-loop.mjs) runs, so the two do the same work.

/** The maker: sleeps, then writes the iteration's mark (LOOP_SEQUENCE comes from the service). */
export const makerArgv = (seconds) => ['sh', '-c', `sleep ${seconds}; echo "BENCH_MARK=$LOOP_SEQUENCE" > progress.txt`];

/** The gate: sleeps; with `logBytes`, prints that much log first (to show a big log adds no history). */
export const gateArgv = (seconds, logBytes = 0) =>
  logBytes > 0
    ? ['sh', '-c', `yes 'bench gate log line: nothing is wrong' | head -c ${logBytes}; sleep ${seconds}`]
    : ['sh', '-c', `sleep ${seconds}`];

export function benchLoopBody(
  repo,
  { makerSeconds = 1, gateSeconds = 1, gateLogBytes = 0, maxIterations = 3, requireContractApproval = false } = {},
) {
  return {
    repository: { url: repo, baseRef: 'main' },
    contract: {
      objective: 'Bench: write the iteration mark to progress.txt.',
      outcome: 'progress.txt holds the last iteration mark.',
      // Proven by the fake gate passing: no test names, no commands of their own.
      acceptanceCriteria: [
        { id: 'AC-1', statement: 'the build gate passes', verification: { type: 'gate', gate: 'build' } },
      ],
    },
    gates: [{ gate: 'build', argv: gateArgv(gateSeconds, gateLogBytes), timeoutSeconds: 120 }],
    maker: { backend: 'command', argv: makerArgv(makerSeconds), timeoutSeconds: 600 },
    maxIterations,
    setup: [],
    requireContractApproval,
    // Nothing is pushed: the plain script does not push either (the patch and report are still made).
    delivery: { push: false },
  };
}
