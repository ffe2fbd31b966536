// Shared shapes and helpers for reading test counts from a runner's own output. Counts are
// evidence only when the runner printed them, so every parser returns null rather than a guess.

export type RunnerName =
  'jest' | 'vitest' | 'mocha' | 'node:test' | 'tap' | 'pytest' | 'go' | 'cargo' | 'surefire' | 'gradle' | 'junit';

/** The counts a gate records (docs/design.md §3.3); `domain/gates` TestCounts plus the runner that printed them. */
export interface TestCounts {
  runner: RunnerName;
  passed: number;
  failed: number;
  skipped: number;
}

export interface TestReport extends TestCounts {
  /**
   * Names of the passed tests, as the runner reported them, qualified by their file where the runner
   * gives it (`test/sum.test.js > sum > adds`, `tests/test_sum.py::test_adds`); empty when its output
   * does not list them. Never inferred from anything but a per-test "passed" record.
   */
  passedTests: string[];
  /** Names of the failed tests, the same way; a runner's output may list only some of them. */
  failedTests: string[];
}

/** What one runner's parser found in the output. */
export type Detection =
  // no summary of this runner anywhere
  | null
  // a summary of this runner, but one that cannot be trusted (garbled, inconsistent, incomplete)
  | 'untrusted'
  | TestReport;

export type Counts = Omit<TestCounts, 'runner'>;

// CSI escape sequences (colours, bold, cursor moves) that runners print for terminals.
const ANSI_ESCAPE = /\x1b\[[0-?]*[ -/]*[@-~]/g;

/** Output as the parsers read it: no colour codes, `\n` line endings. */
export function normaliseOutput(output: string): string {
  return output.replace(ANSI_ESCAPE, '').replace(/\r\n?/g, '\n');
}

/**
 * One command may run a runner several times (e.g. once per workspace or test binary); each
 * summary covers its own run, so they add up. One untrustworthy summary makes the whole output
 * untrustworthy.
 */
export function combine(
  runner: RunnerName,
  summaries: (Counts | null)[],
  names: { passed?: string[]; failed?: string[] } = {},
): Detection {
  if (summaries.length === 0) return null;
  const report: TestReport = {
    ...emptyReport(runner),
    passedTests: names.passed ?? [],
    failedTests: names.failed ?? [],
  };
  for (const summary of summaries) {
    if (summary === null) return 'untrusted';
    report.passed += summary.passed;
    report.failed += summary.failed;
    report.skipped += summary.skipped;
  }
  return report;
}

export function emptyReport(runner: RunnerName): TestReport {
  return { runner, passed: 0, failed: 0, skipped: 0, passedTests: [], failedTests: [] };
}

/** Reads a named group of a match as a count; a category a runner left out counts 0. */
export function countOf(match: RegExpMatchArray): (group: string) => number {
  return (group) => Number(match.groups?.[group] ?? 0);
}

/** Every capture of group 1 of a global, multiline regex over the output. */
export function namesMatching(text: string, line: RegExp): string[] {
  return [...text.matchAll(line)].map((m) => m[1] ?? '').filter((name) => name !== '');
}

/** The reports of several invocations or modules of one run, added up; null when there are none. */
export function mergeReports(reports: readonly TestReport[]): TestReport | null {
  if (!reports.length) return null;
  return {
    runner: reports[0]!.runner,
    passed: reports.reduce((n, r) => n + r.passed, 0),
    failed: reports.reduce((n, r) => n + r.failed, 0),
    skipped: reports.reduce((n, r) => n + r.skipped, 0),
    passedTests: reports.flatMap((r) => r.passedTests),
    failedTests: reports.flatMap((r) => r.failedTests),
  };
}
