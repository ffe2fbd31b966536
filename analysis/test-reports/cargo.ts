import { emptyReport, type Detection } from './report';

// libtest (cargo test) output: each test binary, and the doc-tests, print `running N tests`, a line
// per test, then `test result: ok. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out;
// finished in 0.00s`. Results add up over all binaries. Each result must close a `running N tests`
// block whose N equals its passed + failed + ignored + measured; a binary that crashed (no result
// line) or a result that disagrees with its own status makes the output untrusted. Ignored tests are
// skipped; measured (benchmarks) are not test passes and are counted as skipped.
//
// Tests are named by their crate: cargo announces each binary on stderr before it runs (`Running
// unittests src/lib.rs (target/debug/deps/calc-0123abcd…)`, `Running tests/api.rs (…/deps/api-…)`,
// `Doc-tests calc`), one announcement per `running N tests` block and in the same order, whether the
// output holds both streams interleaved or stdout before stderr. So a unit test is `calc::tests::adds`
// and an integration test `api::adds` (its file is a crate of its own), which tells apart the
// `tests::adds` of two workspace members; doc-tests already name their file (`crates/calc/src/lib.rs -
// add (line 3)`). When the announcements and the blocks do not pair up (stderr cut at its cap, output
// without stderr), tests keep libtest's own names.
const RUNNING = /^running (\d+) tests?$/;
const RESULT =
  /^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; \d+ filtered out(?:; finished in \d+(?:\.\d+)?s)?$/;
// `test tests::adds ... ok` or `... FAILED`; a #[should_panic] test reads `test name - should panic ... ok`.
const TEST_RESULT = /^test (.+?)(?: - should panic)? \.\.\. (ok|FAILED)$/;
// cargo's announcement of a test binary: its source, then the executable, whose name is the crate's and a hash.
const BINARY = /^ +Running (?:unittests )?\S.* \((.+)\)$/;
const EXECUTABLE = /([A-Za-z0-9_]+)-[0-9a-f]{8,}(?:\.exe)?$/;
const DOC_TESTS = /^ +Doc-tests \S+$/;

export function parseCargo(text: string): Detection {
  const report = emptyReport('cargo');
  let open: number | null = null;
  let results = 0;
  let blocks = 0;
  const named: Array<{ block: number; name: string; passed: boolean }> = [];
  const crates: Array<string | null> = [];
  for (const line of text.split('\n')) {
    const binary = BINARY.exec(line);
    if (binary) crates.push(EXECUTABLE.exec(binary[1] ?? '')?.[1] ?? null);
    else if (DOC_TESTS.test(line)) crates.push(null);
    const running = RUNNING.exec(line);
    if (running) {
      if (open !== null) return 'untrusted';
      open = Number(running[1]);
      blocks++;
      continue;
    }
    const test = TEST_RESULT.exec(line);
    if (test && open !== null) named.push({ block: blocks - 1, name: test[1] ?? '', passed: test[2] === 'ok' });
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
  if (open !== null) return 'untrusted';
  const paired = crates.length === blocks;
  for (const { block, name, passed } of named) {
    const crate = paired ? crates[block] : null;
    (passed ? report.passedTests : report.failedTests).push(crate ? `${crate}::${name}` : name);
  }
  return report;
}
