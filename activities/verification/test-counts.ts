// Reads pass/fail/skip counts from a test runner's own summary. Counts are evidence only when the
// runner printed them, so anything not matching a known summary format yields null, never a guess.

export interface TestCounts {
  runner: 'jest' | 'node:test';
  passed: number;
  failed: number;
  skipped: number;
}

// CSI escape sequences (colours, bold, cursor moves) that runners print for terminals.
const ANSI_ESCAPE = /\x1b\[[0-?]*[ -/]*[@-~]/g;

// Jest's summary line, e.g. `Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total`.
// Each category is printed only when non-zero, always in this order (@jest/reporters getSummary).
const JEST_TESTS_LINE = new RegExp(
  '^Tests: +' +
    '(?:(?<failed>\\d+) failed, )?(?:(?<skipped>\\d+) skipped, )?' +
    '(?:(?<todo>\\d+) todo, )?(?:(?<passed>\\d+) passed, )?' +
    '(?<total>\\d+) total$',
  'gm',
);

// node:test's closing block: `ℹ` from the spec reporter, `#` from TAP; `suites` is newer (Node 20).
const NODE_TEST_SUMMARY = new RegExp(
  [
    '^(?<mark>[ℹ#]) tests (?<total>\\d+)',
    '(?:\\k<mark> suites \\d+\\n)?\\k<mark> pass (?<passed>\\d+)',
    '\\k<mark> fail (?<failed>\\d+)',
    '\\k<mark> cancelled (?<cancelled>\\d+)',
    '\\k<mark> skipped (?<skipped>\\d+)',
    '\\k<mark> todo (?<todo>\\d+)$',
  ].join('\\n'),
  'gmu',
);

type Counts = Omit<TestCounts, 'runner'>;

export function parseTestCounts(output: string): TestCounts | null {
  const text = output.replace(ANSI_ESCAPE, '').replace(/\r\n?/g, '\n');
  const jest = combine('jest', [...text.matchAll(JEST_TESTS_LINE)].map(jestCounts));
  const nodeTest = combine('node:test', [...text.matchAll(NODE_TEST_SUMMARY)].map(nodeTestCounts));
  // Summaries from both runners cannot be reported as one runner's counts.
  if (jest && nodeTest) return null;
  return jest ?? nodeTest;
}

function jestCounts(match: RegExpMatchArray): Counts | null {
  const n = countOf(match);
  const skipped = n('skipped') + n('todo');
  return consistent({ passed: n('passed'), failed: n('failed'), skipped }, n('total'));
}

function nodeTestCounts(match: RegExpMatchArray): Counts | null {
  const n = countOf(match);
  // A cancelled test did not pass; node:test exits non-zero for it as for a failure.
  const failed = n('failed') + n('cancelled');
  const skipped = n('skipped') + n('todo');
  return consistent({ passed: n('passed'), failed, skipped }, n('total'));
}

// Jest leaves out categories that are zero, so a missing group counts 0.
function countOf(match: RegExpMatchArray): (group: string) => number {
  return (group) => Number(match.groups?.[group] ?? 0);
}

// Both runners print a total equal to the sum of the categories; a mismatch means the summary was
// garbled (e.g. interleaved with other output), so it is not trusted.
function consistent(counts: Counts, total: number): Counts | null {
  return counts.passed + counts.failed + counts.skipped === total ? counts : null;
}

// One command may run a runner several times (e.g. once per workspace); each summary covers its
// own run, so they add up. One untrustworthy summary makes the whole output untrustworthy.
function combine(runner: TestCounts['runner'], summaries: (Counts | null)[]): TestCounts | null {
  if (summaries.length === 0) return null;
  let sum: TestCounts = { runner, passed: 0, failed: 0, skipped: 0 };
  for (const summary of summaries) {
    if (summary === null) return null;
    sum = {
      runner,
      passed: sum.passed + summary.passed,
      failed: sum.failed + summary.failed,
      skipped: sum.skipped + summary.skipped,
    };
  }
  return sum;
}
