import type { TestCounts } from '../../domain/gates';
import type { CommandResult } from '../process/run-command';

// Whether a gate run counts as passing evidence (docs/design.md §3.3), and if not, why — in one line.

/** How a failure reason for a command that never ran begins (stored, then read back by environmentProblem's callers). */
export const COULD_NOT_START = 'the command could not start: ';

/** How a failure reason for a command stopped by a sandbox limit begins (read back like COULD_NOT_START). */
export const LIMIT_REACHED = 'the command ran into a limit of its sandbox: ';

/** How a failure reason for an offline build missing an artifact begins (read back like COULD_NOT_START). */
export const ARTIFACT_NOT_RESOLVED = 'set-up did not put an artifact this offline build needs in the loop cache: ';

/** The Gradle wrapper failing to download its distribution: it prints the URL, then a stack trace through its own classes. */
export const GRADLE_WRAPPER_DOWNLOAD_FAILED =
  /^Downloading (\S+\/gradle-[\w.-]+\.zip)\s*$(?=[\s\S]*\bat org\.gradle\.wrapper\.)/m;

// Offline, missing a plugin, a dependency or a test provider: Maven (on stdout), and Gradle (on stderr) for
// a module it has no metadata of, or a file of one it has; or the wrapper's distribution.
const OFFLINE_ARTIFACT_MISSING = [
  /in offline mode and the artifact (\S+) has not been downloaded from it before/,
  /No cached version of (\S+) available for offline mode/,
  /Could not download \S+ \((\S+)\): No cached version available for offline mode/,
  GRADLE_WRAPPER_DOWNLOAD_FAILED,
];

function missingOfflineArtifact(run: Pick<CommandResult, 'stdout' | 'stderr'>): string | null {
  const output = `${run.stdout}\n${run.stderr}`;
  for (const pattern of OFFLINE_ARTIFACT_MISSING) {
    const found = pattern.exec(output);
    if (found) return found[1]!;
  }
  return null;
}

/** The limits a failed command ran into, as one line; null when it ended on its own terms. */
export function limitProblem(run: Pick<CommandResult, 'exitCode' | 'signal' | 'limitsReached'>): string | null {
  // Writing past the workspace limit fails the command even if it then exits 0: the limit is the rule.
  const failed = run.exitCode !== 0 || run.signal !== null || run.limitsReached.some((l) => l.limit === 'workspace');
  if (!failed || run.limitsReached.length === 0) return null;
  return run.limitsReached.map((l) => l.message).join('; ');
}

export function gateFailureReason(gate: string, run: CommandResult, counts: TestCounts | null): string | null {
  if (run.spawnError) return `${COULD_NOT_START}${run.spawnError}`;
  // Before the exit code: a gate that died of its sandbox's limits failed because of the machine.
  const limit = limitProblem(run);
  if (limit) return `${LIMIT_REACHED}${limit}`;
  if (run.timeoutStatus === 'TIMED_OUT') return 'the command timed out and was killed';
  if (run.timeoutStatus === 'CANCELLED') return 'the command was cancelled';
  const artifact = run.exitCode !== 0 ? missingOfflineArtifact(run) : null;
  if (artifact) return `${ARTIFACT_NOT_RESOLVED}${artifact}`;
  if (run.exitCode !== 0) {
    const tests = counts ? ` (${counts.failed} failed, ${counts.passed} passed)` : '';
    return `\`${run.argv.join(' ')}\` exited with code ${run.exitCode}${tests}`;
  }
  if (gate === 'tests') {
    if (!counts) return 'the tests gate printed no test counts; passing tests must be reported by the runner';
    if (counts.failed > 0) return `${counts.failed} test(s) failed`;
    if (counts.passed === 0) return 'no test passed';
  }
  return null;
}

/**
 * Output with what changes from run to run (colours, durations, timestamps) removed, so the same
 * failure hashes the same across iterations.
 */
export function normaliseOutput(text: string): string {
  return (
    text
      .replace(/\x1b\[[0-9;]*m/g, '')
      .replace(/\b\d+(\.\d+)?\s?(ms|s|sec|seconds)\b/g, '<duration>')
      .replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z?/g, '<time>')
      .replace(/^(Time:|# duration_ms|ℹ duration_ms).*$/gm, '')
      // jest --json's results line carries start times and per-file timings; its failures are on stderr too.
      .replace(/^.*\{"numFailedTestSuites":.*$/gm, '<jest results>')
      // go test -json events carry timestamps and elapsed times.
      .replace(/"Time":"[^"]*",?|"Elapsed":[\d.]+,?/g, '')
      .trim()
  );
}

/**
 * Why a command failed, when that is the machine's fault rather than the code's: not found (ENOENT, or a
 * shell's exit 127 "not found"), not executable (126), a runner `python -m` cannot find, an artifact an offline build lacks
 * (`missingArtifact`), or a sandbox limit reached (`limit`: what
 * limitProblem said). The judge escalates these as ENVIRONMENT instead of sending the maker back to "fix"
 * a missing tool, or the limits of a sandbox it does not control.
 */
export function environmentProblem(
  run: Pick<CommandResult, 'argv' | 'exitCode' | 'spawnError' | 'stderr'> & {
    limit?: string | null;
    missingArtifact?: string | null;
  },
): string | null {
  if (run.limit) return `\`${run.argv.join(' ')}\` ran into a limit of its sandbox: ${run.limit}`;
  if (run.missingArtifact)
    return `\`${run.argv.join(' ')}\` needs ${run.missingArtifact}, which set-up did not put in the loop cache`;
  if (run.spawnError)
    return /ENOENT|not found/i.test(run.spawnError)
      ? `\`${run.argv.join(' ')}\` could not start: ${run.spawnError}`
      : null;
  const lastLines = run.stderr.trimEnd().split('\n').slice(-3).join('\n');
  if (run.exitCode === 127 && /not found|No such file or directory/i.test(run.stderr)) {
    return `\`${run.argv.join(' ')}\` exited with code 127, a command it needs was not found: ${lastLines}`;
  }
  if (run.exitCode === 126)
    return `\`${run.argv.join(' ')}\` exited with code 126, a command it needs could not be executed: ${lastLines}`;
  const missing = MISSING_MODULE_RUNNER.exec(run.stderr);
  if (run.exitCode !== 0 && missing)
    return `\`${run.argv.join(' ')}\` could not find its runner, nothing installed it: ${missing[0].trim()}`;
  return null;
}

// `python -m pytest` with no pytest installed: Python's own line for a module `-m` cannot find (code
// importing a missing module fails with a traceback's `ModuleNotFoundError: No module named 'x'` instead).
const MISSING_MODULE_RUNNER = /^\S*python[\d.]*: No module named [\w.]+[ \t]*$/m;
