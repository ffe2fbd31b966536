import type { JUnitTestcase } from './junit';
import { combine, type Counts, type Detection } from './report';

// pytest's final line, e.g. `==== 1 failed, 3 passed, 2 skipped, 1 xfailed, 1 xpassed, 1 error in
// 0.03s =====`; with -q the `=` rules are left out. The duration is always there, with `(h:mm:ss)`
// after a minute; `no tests ran` replaces the categories when nothing ran.
const SUMMARY =
  /^(?<rule>=+ )?(?<parts>no tests ran|\d+ [a-z]+(?: [a-z]+)?(?:, \d+ [a-z]+(?: [a-z]+)?)*) in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?(?: =+)?$/gm;
const PART = /^(\d+) ([a-z]+(?: [a-z]+)?)$/;

// How each category of the summary counts. An error (in collection, setup or teardown) is a failure.
// xfailed (the test failed as its xfail marker expects) is a skip, xpassed (a non-strict xfail that
// passed) a pass, as pytest's own JUnit report counts them; a strict xfail that passes is reported
// by pytest as failed. Deselected tests did not run; warnings and reruns are not test outcomes.
// pytest 9's subtests count as failures when they fail and are otherwise left out, since their
// test is counted on its own.
const CATEGORIES = new Map<string, keyof Counts | 'ignored'>(
  Object.entries({
    passed: 'passed',
    xpassed: 'passed',
    failed: 'failed',
    error: 'failed',
    errors: 'failed',
    skipped: 'skipped',
    xfailed: 'skipped',
    deselected: 'ignored',
    warning: 'ignored',
    warnings: 'ignored',
    rerun: 'ignored',
    'subtests passed': 'ignored',
    'subtests skipped': 'ignored',
    'subtests xfailed': 'ignored',
    'subtests xpassed': 'ignored',
    'subtests failed': 'failed',
  } as const),
);

// -v lists each test as `test_x.py::TestK::test_y[param] PASSED   [ 50%]` (XPASS for an xpassed one,
// followed by its reason).
const PASSED_TEST = /^(\S+?::.+?) (?:PASSED|XPASS(?: \(.*\))?)(?: +\[[ \d%/]+\])?$/gm;
// -rA adds a short test summary, whatever the verbosity, with `PASSED <node id>` per passed test and
// `XPASS <node id> - <reason>` per xpassed one.
const SUMMARY_PASSED_TEST = /^(?:PASSED (\S+?::.+)|XPASS (\S+?::.+?)(?: - .*)?)$/gm;
// Failures and errors are in the short summary by default (`-r fE`): `FAILED <node id> - <message>`,
// `ERROR <node id or file> - <message>`; -v lists them as `<node id> FAILED|ERROR   [ 50%]`.
const FAILED_TEST = /^(\S+?::.+?) (?:FAILED|ERROR)(?: +\[[ \d%/]+\])?$/gm;
const SUMMARY_FAILED_TEST = /^(?:FAILED|ERROR) (\S+?\.py(?:::.+?)?)(?: - .*)?$/gm;

export function parsePytest(text: string): Detection {
  const summaries = [...text.matchAll(SUMMARY)].filter(isPytestSummary).map(counts);
  // With -v and the short summary a test is listed twice.
  const names = (...lists: RegExpMatchArray[][]) => [...new Set(lists.flat().map((m) => m[1] ?? m[2] ?? ''))];
  return combine('pytest', summaries, {
    passed: names([...text.matchAll(PASSED_TEST)], [...text.matchAll(SUMMARY_PASSED_TEST)]),
    failed: names([...text.matchAll(FAILED_TEST)], [...text.matchAll(SUMMARY_FAILED_TEST)]),
  });
}

/**
 * A pytest JUnit testcase as its node id, `tests/test_sum.py::TestSum::test_adds[2-3]`. pytest writes
 * the node id's file as a dotted classname (`tests.test_sum.TestSum`); with `junit_family=xunit1`
 * (which the service asks for) the `file` attribute says which part of it is the file. Without it, or
 * when the two disagree, the classname stands in for the file.
 */
export function pytestJUnitName(testcase: JUnitTestcase): string {
  const { classname = '', file, name } = testcase;
  const module = file?.replace(/\.py$/, '').replaceAll('/', '.');
  if (!file || !module || (classname !== module && !classname.startsWith(`${module}.`))) {
    return classname ? `${classname}::${name}` : name;
  }
  const classes = classname.slice(module.length + 1);
  return [file, ...(classes ? classes.split('.') : []), name].join('::');
}

// Without its `=` rules (-q) the line is short enough that another tool's log line could look like
// it (`2 warnings in 0.5s`), so it is taken as pytest's only when every category is pytest's and one
// of them is a test outcome. A ruled line is pytest's whatever it says.
function isPytestSummary(match: RegExpMatchArray): boolean {
  const parts = match.groups?.parts ?? '';
  if (match.groups?.rule || parts === 'no tests ran') return true;
  const categories = parts.split(', ').map((part) => PART.exec(part)?.[2]);
  return (
    categories.every((c) => c !== undefined && CATEGORIES.has(c)) &&
    categories.some((c) => c !== undefined && !/^warnings?$/.test(c))
  );
}

function counts(match: RegExpMatchArray): Counts | null {
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
  const parts = match.groups?.parts ?? '';
  if (parts === 'no tests ran') return counts;
  for (const part of parts.split(', ')) {
    const [, n, category] = PART.exec(part) ?? [];
    const kind = category === undefined ? undefined : CATEGORIES.get(category);
    // A category this parser does not know (a plugin's) cannot be classed as passed or failed.
    if (kind === undefined) return null;
    if (kind !== 'ignored') counts[kind] += Number(n);
  }
  return counts;
}
