import type { TestCounts } from '../../domain/gates';
import type { CommandResult } from '../process/run-command';

// Whether a gate run counts as passing evidence (SPEC §3.3), and if not, why — in one line.

export function gateFailureReason(gate: string, run: CommandResult, counts: TestCounts | null): string | null {
  if (run.spawnError) return `the command could not start: ${run.spawnError}`;
  if (run.timeoutStatus === 'TIMED_OUT') return 'the command timed out and was killed';
  if (run.timeoutStatus === 'CANCELLED') return 'the command was cancelled';
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
  return text
    .replace(/\x1b\[[0-9;]*m/g, '')
    .replace(/\b\d+(\.\d+)?\s?(ms|s|sec|seconds)\b/g, '<duration>')
    .replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z?/g, '<time>')
    .replace(/^(Time:|# duration_ms|ℹ duration_ms).*$/gm, '')
    .trim();
}
