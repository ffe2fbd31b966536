import { emptyReport, type Detection } from './report';
import { unescapeTap } from './node-test';

// Generic TAP (tape, mocha --reporter tap, tap-compatible producers), read from its top-level
// stream only: lines starting in column 0. Indented lines are subtests or YAML diagnostics, whose
// outcome the enclosing top-level test point already carries.
//
// TAP is recognised only with a plan (`1..N`) and test points (or a `TAP version` line), and the
// counts are trusted only when the number of top-level test points equals the planned number
// (summed, when several streams were printed), so a stray `ok` line in a log is never read as a test. Each test point counts once: `ok` → passed,
// `not ok` → failed, either with a `# SKIP` or `# TODO` directive → skipped (as node:test and jest
// count todo). These are TAP test points, which some producers (tape) emit per assertion.
const PLAN = /^1\.\.(\d+)(?:\s*#.*)?$/;
const POINT = /^(?<not>not )?ok(?: (?<rest>.*))?$/;
const REST = /^(?:\d+\b)?\s*(?:-\s*)?(?<desc>.*?)(?:\s+#\s*(?<directive>skip|todo)\S*(?:\s.*)?)?$/i;
const BAIL_OUT = /^Bail out!/;
const TAP_VERSION = /^TAP version \d+$/m;
// tape and mocha print `# fail N` after the plan; when present it must agree with the points.
const FAIL_COMMENT = /^# fail +(\d+)$/;

export function parseTap(text: string): Detection {
  let planned: number | null = null;
  let failComment: number | null = null;
  const report = emptyReport('tap');
  let points = 0;
  let bailedOut = false;
  for (const line of text.split('\n')) {
    const plan = PLAN.exec(line);
    if (plan) {
      planned = (planned ?? 0) + Number(plan[1]);
      continue;
    }
    // The producer gave up: the plan may be met, but not every test ran.
    if (BAIL_OUT.test(line)) bailedOut = true;
    const fail = FAIL_COMMENT.exec(line);
    if (fail) failComment = (failComment ?? 0) + Number(fail[1]);
    const point = POINT.exec(line);
    if (!point) continue;
    points++;
    const rest = REST.exec(point.groups?.rest ?? '');
    const name = unescapeTap(rest?.groups?.desc ?? '');
    if (rest?.groups?.directive) report.skipped++;
    else if (point.groups?.not) {
      report.failed++;
      if (name) report.failedTests.push(name);
    } else {
      report.passed++;
      if (name) report.passedTests.push(name);
    }
  }
  // A lone `1..3` line in a log is not TAP: a plan needs test points or a TAP version header.
  if (planned === null || (points === 0 && !TAP_VERSION.test(text))) return null;
  if (bailedOut || points !== planned) return 'untrusted';
  if (failComment !== null && failComment !== report.failed) return 'untrusted';
  return report;
}
