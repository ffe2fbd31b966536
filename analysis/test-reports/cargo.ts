import { emptyReport, type Detection } from './report';

// libtest (cargo test) output: each test binary, and the doc-tests, print `running N tests`, a line
// per test, then `test result: ok. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out;
// finished in 0.00s`. Results add up over all binaries. Each result must close a `running N tests`
// block whose N equals its passed + failed + ignored + measured; a binary that crashed (no result
// line) or a result that disagrees with its own status makes the output untrusted. Ignored tests are
// skipped; measured (benchmarks) are not test passes and are counted as skipped.
const RUNNING = /^running (\d+) tests?$/;
const RESULT =
  /^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; \d+ filtered out(?:; finished in \d+(?:\.\d+)?s)?$/;
// `test tests::adds ... ok` or `... FAILED`; a #[should_panic] test reads `test name - should panic ... ok`.
const TEST_RESULT = /^test (.+?)(?: - should panic)? \.\.\. (ok|FAILED)$/;

export function parseCargo(text: string): Detection {
  const report = emptyReport('cargo');
  let open: number | null = null;
  let results = 0;
  for (const line of text.split('\n')) {
    const running = RUNNING.exec(line);
    if (running) {
      if (open !== null) return 'untrusted';
      open = Number(running[1]);
      continue;
    }
    const test = TEST_RESULT.exec(line);
    if (test && open !== null) (test[2] === 'ok' ? report.passedTests : report.failedTests).push(test[1] ?? '');
    const result = RESULT.exec(line);
    if (!result) continue;
    const status = result[1];
    const [passed, failed, ignored, measured] = result.slice(2, 6).map(Number) as [number, number, number, number];
    results++;
    if (open !== passed + failed + ignored + measured) return 'untrusted';
    if ((status === 'ok') !== (failed === 0)) return 'untrusted';
    report.passed += passed;
    report.failed += failed;
    report.skipped += ignored + measured;
    open = null;
  }
  if (results === 0) return null;
  return open === null ? report : 'untrusted';
}
