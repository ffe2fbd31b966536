import type { JUnitTestcase } from './junit';
import { combine, countOf, type Counts, type Detection } from './report';

// node:test's closing block: `ℹ` from the spec reporter, `#` from TAP; `suites` is newer (Node 20).
const SUMMARY = new RegExp(
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

// Spec reporter: `✔ name (0.9ms)` or `✖ name (0.9ms)`; skipped and todo tests end in `# SKIP` /
// `# TODO` instead. A describe block, and a test with subtests, opens with `▶ name` and closes with
// `✔`/`✖ name (1.4ms)` at the same indentation; the two cannot be told apart, so such closing lines
// are left out (a parent test is counted by node:test but not listed). The closing `failing tests:`
// section repeats each failed test.
const SPEC_TEST = /^(?<indent> *)(?<mark>[✔✖]) (?<name>.+?) \(\d+(?:\.\d+)?m?s\)$/u;
const SPEC_BLOCK = /^(?<indent> *)▶ (?<name>.+)$/u;

// TAP reporter: `ok 2 - name` or `not ok 2 - name`, indented by nesting, then a YAML block
// (`type: 'suite'` for a describe block).
const TAP_POINT = /^(?<indent> *)(?<not>not )?ok \d+ - (?<name>.*)$/;
const TAP_DIRECTIVE = / # (?:SKIP|TODO)\b/i;

export function parseNodeTest(text: string): Detection {
  const summaries = [...text.matchAll(SUMMARY)].map(counts);
  if (summaries.length === 0) return null;
  const spec = specTests(text);
  const tap = tapTests(text);
  return combine('node:test', summaries, {
    passed: [...spec.passed, ...tap.passed],
    failed: [...new Set([...spec.failed, ...tap.failed])],
  });
}

/**
 * A node:test JUnit testcase (`--test-reporter=junit`): the describe blocks and parent tests it ran in,
 * then its name. The reporter names no file, and its classname is always `test`. A test with subtests
 * is a `<testsuite>` there, so the report counts it (and a failure of its own) only through its
 * subtests; the gate's exit code still fails the run.
 */
export function nodeTestJUnitName(testcase: JUnitTestcase): string {
  return [...testcase.suites, testcase.name].join(' > ');
}

interface Names {
  passed: string[];
  failed: string[];
}

function counts(match: RegExpMatchArray): Counts | null {
  const n = countOf(match);
  // A cancelled test did not pass; node:test exits non-zero for it as for a failure.
  const counts = { passed: n('passed'), failed: n('failed') + n('cancelled'), skipped: n('skipped') + n('todo') };
  // The total equals the sum of the categories; a mismatch means a garbled summary.
  return counts.passed + counts.failed + counts.skipped === n('total') ? counts : null;
}

function specTests(text: string): Names {
  const blocks = new Set<string>();
  const names: Names = { passed: [], failed: [] };
  for (const line of text.split('\n')) {
    const block = SPEC_BLOCK.exec(line);
    if (block?.groups) blocks.add(`${block.groups.indent}${block.groups.name}`);
    const test = SPEC_TEST.exec(line);
    if (test?.groups && !blocks.has(`${test.groups.indent}${test.groups.name}`)) {
      (test.groups.mark === '✔' ? names.passed : names.failed).push(test.groups.name ?? '');
    }
  }
  return names;
}

function tapTests(text: string): Names {
  const lines = text.split('\n');
  const names: Names = { passed: [], failed: [] };
  lines.forEach((line, i) => {
    const point = TAP_POINT.exec(line);
    if (!point?.groups || TAP_DIRECTIVE.test(point.groups.name ?? '')) return;
    if (isSuite(lines, i + 1, point.groups.indent ?? '')) return;
    (point.groups.not ? names.failed : names.passed).push(unescapeTap(point.groups.name ?? ''));
  });
  return names;
}

// Whether the YAML diagnostics block starting at line `from` marks its test point as a suite.
function isSuite(lines: string[], from: number, indent: string): boolean {
  if (lines[from] !== `${indent}  ---`) return false;
  for (let i = from + 1; i < lines.length && lines[i] !== `${indent}  ...`; i++) {
    if (lines[i] === `${indent}  type: 'suite'`) return true;
  }
  return false;
}

// node:test escapes `\` and `#` in TAP descriptions.
export function unescapeTap(name: string): string {
  return name.replace(/\\([\\#])/g, '$1');
}
