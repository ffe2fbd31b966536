import { combine, countOf, namesMatching, type Counts, type Detection, type TestReport } from './report';

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
  const json = parseJestJson(text);
  if (json !== null) return json;
  const summaries = [...text.matchAll(TESTS_LINE)].map(counts);
  return combine('jest', summaries, namesMatching(text, PASSED_TEST));
}

function counts(match: RegExpMatchArray): Counts | null {
  const n = countOf(match);
  const counts = { passed: n('passed'), failed: n('failed'), skipped: n('skipped') + n('todo') };
  // The total equals the sum of the categories; a mismatch means a garbled summary.
  return counts.passed + counts.failed + counts.skipped === n('total') ? counts : null;
}

// `jest --json` (which the service appends to a recognisable jest test script) prints the results as
// one JSON line on stdout, the usual report going to stderr: every test with its describe blocks and
// status, whatever reporters the repository configured and however many files ran. Passed tests are
// named `describe > … > title`. The document's own totals must agree with its tests; a line that
// does not parse (the stored output was cut at its cap) leaves the text summary to be read instead.
const JSON_START = '{"numFailedTestSuites":';

interface JestAssertion {
  ancestorTitles: string[];
  title: string;
  status: string;
}

export function parseJestJson(text: string): Detection {
  const reports = text
    .split('\n')
    .filter((line) => line.includes(JSON_START))
    .map((line) => jestJsonReport(line.slice(line.indexOf(JSON_START))));
  if (reports.length === 0 || reports.includes(null)) return null;
  const report: TestReport = { runner: 'jest', passed: 0, failed: 0, skipped: 0, passedTests: [] };
  for (const r of reports as Array<TestReport | 'untrusted'>) {
    if (r === 'untrusted') return 'untrusted';
    report.passed += r.passed;
    report.failed += r.failed;
    report.skipped += r.skipped;
    report.passedTests.push(...r.passedTests);
  }
  return report;
}

function jestJsonReport(line: string): TestReport | 'untrusted' | null {
  let doc: unknown;
  try {
    doc = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { testResults?: unknown }).testResults)) return null;
  const { testResults, numTotalTests } = doc as { testResults: Array<{ assertionResults?: unknown }>; numTotalTests?: unknown };
  const report: TestReport = { runner: 'jest', passed: 0, failed: 0, skipped: 0, passedTests: [] };
  let total = 0;
  for (const file of testResults) {
    if (!Array.isArray(file?.assertionResults)) return 'untrusted';
    for (const a of file.assertionResults as JestAssertion[]) {
      total++;
      if (a.status === 'passed') {
        report.passed++;
        report.passedTests.push([...(a.ancestorTitles ?? []), a.title].join(' > '));
      } else if (a.status === 'failed') report.failed++;
      // pending (skip), todo, disabled: did not run
      else report.skipped++;
    }
  }
  return total === numTotalTests ? report : 'untrusted';
}
