import { emptyReport, type Detection } from './report';

// `go test -json` output: one test2json event per line, e.g.
//   {"Action":"run","Package":"example.com/m/calc","Test":"TestTable/small"}
//   {"Action":"pass","Package":"example.com/m/calc","Test":"TestTable/small","Elapsed":0}
// Each test and subtest starts with a `run` event and ends with exactly one `pass`, `fail` or
// `skip` event naming it; events without `Test` are about the package (a package without test
// files is `skip`ped, a package whose tests failed or did not build is `fail`ed). Counts are the
// per-test result events, subtests included, as with `go test -v`; passed tests are named
// `<package>/<Test>[/<subtest>]` (failed ones too), so an acceptance criterion naming `TestAdd` or
// `TestTable/small` matches their end.
//
// Other lines (`go: downloading …` on stderr, build-output events) are ignored. The output is
// untrusted when a test started but never reported a result (a panic or timeout that killed the
// binary), or a package failed without any failing test (a build failure).

interface GoTestEvent {
  Action: string;
  Package?: string;
  Test?: string;
}

const RESULTS = new Set(['pass', 'fail', 'skip']);

export function parseGoTestJson(text: string): Detection {
  const events = text.split('\n').flatMap(eventOf);
  // test2json output always has package-level events; anything else is not go test -json.
  if (
    !events.some(
      (e) => e.Package !== undefined && e.Test === undefined && (e.Action === 'start' || RESULTS.has(e.Action)),
    )
  ) {
    return null;
  }
  const report = emptyReport('go');
  const running = new Set<string>();
  const failedPackages = new Set<string>();
  const packagesWithFailedTests = new Set<string>();
  for (const event of events) {
    const pkg = event.Package ?? '';
    if (event.Test === undefined) {
      if (event.Action === 'fail') failedPackages.add(pkg);
      continue;
    }
    const id = `${pkg}/${event.Test}`;
    if (event.Action === 'run') {
      running.add(id);
      continue;
    }
    if (!RESULTS.has(event.Action)) continue;
    // A result for a test that never started (or reported twice) is not trustworthy.
    if (!running.delete(id)) return 'untrusted';
    if (event.Action === 'pass') {
      report.passed++;
      report.passedTests.push(id);
    } else if (event.Action === 'fail') {
      report.failed++;
      report.failedTests.push(id);
      packagesWithFailedTests.add(pkg);
    } else report.skipped++;
  }
  if (running.size > 0) return 'untrusted';
  if ([...failedPackages].some((pkg) => !packagesWithFailedTests.has(pkg))) return 'untrusted';
  return report;
}

function eventOf(line: string): GoTestEvent[] {
  if (!line.startsWith('{')) return [];
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return [];
  }
  if (typeof value !== 'object' || value === null) return [];
  const { Action, Package, Test } = value as Record<string, unknown>;
  if (typeof Action !== 'string') return [];
  return [
    {
      Action,
      ...(typeof Package === 'string' ? { Package } : {}),
      ...(typeof Test === 'string' ? { Test } : {}),
    },
  ];
}
