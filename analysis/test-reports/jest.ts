import path from 'node:path';
import { combine, countOf, emptyReport, namesMatching, type Counts, type Detection, type TestReport } from './report';

// Jest's summary line, e.g. `Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total`.
// Each category is printed only when non-zero, always in this order (@jest/reporters getSummary).
const TESTS_LINE = new RegExp(
  '^Tests: +' +
    '(?:(?<failed>\\d+) failed, )?(?:(?<skipped>\\d+) skipped, )?' +
    '(?:(?<todo>\\d+) todo, )?(?:(?<passed>\\d+) passed, )?' +
    '(?<total>\\d+) total$',
  'gm',
);

// The verbose reporter (the default for a single test file, or with --verbose) lists each test as
// `  ✓ name (2 ms)` or `  ✕ name (2 ms)` under its file, indented by describe depth (`√`/`×` on Windows).
const PASSED_TEST = /^ +[✓√] (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$/gmu;
const FAILED_TEST = /^ +[✕×] (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$/gmu;

export function parseJest(text: string): Detection {
  const json = parseJestJson(text);
  if (json !== null) return json;
  const summaries = [...text.matchAll(TESTS_LINE)].map(counts);
  return combine('jest', summaries, {
    passed: namesMatching(text, PASSED_TEST),
    failed: namesMatching(text, FAILED_TEST),
  });
}

function counts(match: RegExpMatchArray): Counts | null {
  const n = countOf(match);
  const counts = { passed: n('passed'), failed: n('failed'), skipped: n('skipped') + n('todo') };
  // The total equals the sum of the categories; a mismatch means a garbled summary.
  return counts.passed + counts.failed + counts.skipped === n('total') ? counts : null;
}

// `jest --json` prints the results as one JSON line on stdout (the usual report going to stderr), or
// writes them to `--outputFile` (what the service adds to a jest tests gate, test-reporter.ts): every
// test with its file, describe blocks and status, whatever reporters the repository configured and
// however many files ran. Tests are named `describe > … > title`, after their file relative to the
// checkout when the report is read from its file (the output does not say where the checkout is). A
// file that failed without a failed test (it did not load, a hook threw) is listed as failed by its
// file. The document's own totals must agree with its tests; a line that does not parse (the stored
// output was cut at its cap) leaves the text summary to be read instead.
const JSON_START = '{"numFailedTestSuites":';

interface JestFileResult {
  name?: unknown;
  status?: unknown;
  assertionResults?: unknown;
}

interface JestAssertion {
  ancestorTitles: string[];
  title: string;
  status: string;
}

export function parseJestJson(text: string): Detection {
  const reports = text
    .split('\n')
    .filter((line) => line.includes(JSON_START))
    .map((line) => jestJsonReport(line.slice(line.indexOf(JSON_START)), null));
  if (reports.length === 0 || reports.includes(null)) return null;
  const report = emptyReport('jest');
  for (const r of reports as Array<TestReport | 'untrusted'>) {
    if (r === 'untrusted') return 'untrusted';
    report.passed += r.passed;
    report.failed += r.failed;
    report.skipped += r.skipped;
    report.passedTests.push(...r.passedTests);
    report.failedTests.push(...r.failedTests);
  }
  return report;
}

/** The report jest wrote to its `--outputFile`, test names qualified by their file's path under `checkout`. */
export function parseJestJsonFile(text: string, checkout: string): TestReport | null {
  const report = jestJsonReport(text.trim(), checkout);
  return report === 'untrusted' ? null : report;
}

function jestJsonReport(line: string, checkout: string | null): TestReport | 'untrusted' | null {
  let doc: unknown;
  try {
    doc = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { testResults?: unknown }).testResults))
    return null;
  const { testResults, numTotalTests } = doc as { testResults: JestFileResult[]; numTotalTests?: unknown };
  const report = emptyReport('jest');
  let total = 0;
  for (const file of testResults) {
    if (!Array.isArray(file?.assertionResults)) return 'untrusted';
    const fileName = checkout !== null && typeof file.name === 'string' ? relativeTo(checkout, file.name) : null;
    const qualified = (a: JestAssertion) =>
      [...(fileName ? [fileName] : []), ...(a.ancestorTitles ?? []), a.title].join(' > ');
    const assertions = file.assertionResults as JestAssertion[];
    for (const a of assertions) {
      total++;
      if (a.status === 'passed') {
        report.passed++;
        report.passedTests.push(qualified(a));
      } else if (a.status === 'failed') {
        report.failed++;
        report.failedTests.push(qualified(a));
      }
      // pending (skip), todo, disabled: did not run
      else report.skipped++;
    }
    if (fileName && file.status === 'failed' && !assertions.some((a) => a.status === 'failed'))
      report.failedTests.push(fileName);
  }
  return total === numTotalTests ? report : 'untrusted';
}

function relativeTo(checkout: string, file: string): string {
  const relative = path.relative(checkout, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}
