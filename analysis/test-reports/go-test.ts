import { emptyReport, type Detection } from './report';

// `go test -v` output. Every test and subtest prints `=== RUN   TestName[/sub]` when it starts and
// `--- PASS|FAIL|SKIP: TestName[/sub] (0.00s)` when it ends (subtests indented); each package ends in
// `ok  \tpkg\t0.01s`, `FAIL\tpkg ...` or `?   \tpkg\t[no test files]`. Counts are the result lines,
// subtests included, so a parent test and each of its subtests count once each.
//
// Without -v go prints only failing tests and one line per package, so passes cannot be counted:
// such output yields null (untrusted), as does output where a test started but never reported a
// result (a panic or timeout) or a package failed without any failing test (a build failure).
const PACKAGE_LINE = /^(?:ok {2}\t|FAIL\t|\? {3}\t)\S/m;
const PACKAGE_FAILED = /^FAIL\t\S/m;
const RUN = /^=== RUN {3}\S+$/gm;
const RESULT = /^ *--- (PASS|FAIL|SKIP): (\S+) \(\d+(?:\.\d+)?s\)$/gm;

export function parseGoTest(text: string): Detection {
  if (!PACKAGE_LINE.test(text)) return null;
  const started = [...text.matchAll(RUN)].length;
  const results = [...text.matchAll(RESULT)];
  if (started === 0 || results.length !== started) return 'untrusted';
  const report = emptyReport('go');
  for (const [, outcome, name] of results) {
    if (outcome === 'PASS') {
      report.passed++;
      report.passedTests.push(name ?? '');
    } else if (outcome === 'FAIL') {
      report.failed++;
      report.failedTests.push(name ?? '');
    } else report.skipped++;
  }
  if (PACKAGE_FAILED.test(text) && report.failed === 0) return 'untrusted';
  return report;
}
