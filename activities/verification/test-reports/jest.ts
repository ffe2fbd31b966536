import { combine, countOf, namesMatching, type Counts, type Detection } from './report';

// Jest's summary line, e.g. `Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total`.
// Each category is printed only when non-zero, always in this order (@jest/reporters getSummary).
const TESTS_LINE = new RegExp(
  '^Tests: +' +
    '(?:(?<failed>\\d+) failed, )?(?:(?<skipped>\\d+) skipped, )?' +
    '(?:(?<todo>\\d+) todo, )?(?:(?<passed>\\d+) passed, )?' +
    '(?<total>\\d+) total$',
  'gm',
);

// The verbose reporter (the default for a single test file, or with --verbose) lists each passed
// test as `  ✓ name (2 ms)` under its file, indented by describe depth (`√` on Windows).
const PASSED_TEST = /^ +[✓√] (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$/gmu;

export function parseJest(text: string): Detection {
  const summaries = [...text.matchAll(TESTS_LINE)].map(counts);
  return combine('jest', summaries, namesMatching(text, PASSED_TEST));
}

function counts(match: RegExpMatchArray): Counts | null {
  const n = countOf(match);
  const counts = { passed: n('passed'), failed: n('failed'), skipped: n('skipped') + n('todo') };
  // The total equals the sum of the categories; a mismatch means a garbled summary.
  return counts.passed + counts.failed + counts.skipped === n('total') ? counts : null;
}
