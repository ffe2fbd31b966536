import {
  nodeTestJUnitName,
  parseJestJsonFile,
  parseJUnitXml,
  parseMochaReportFile,
  pytestJUnitName,
  vitestJUnitName,
} from '../../analysis/test-reports';

// The report files the service asks runners to write (test-reporter.ts), as the runners wrote them
// (trimmed): every test named after its file where the runner says it, failed tests listed too.

describe('jest --json --outputFile', () => {
  const checkout = '/work/checkout';
  const assertion = (ancestorTitles: string[], title: string, status: string) => ({
    ancestorTitles,
    title,
    status,
    fullName: [...ancestorTitles, title].join(' '),
  });
  const report = (numTotalTests: number) =>
    JSON.stringify({
      numFailedTestSuites: 2,
      numTotalTests,
      testResults: [
        {
          name: `${checkout}/test/sum.test.js`,
          status: 'failed',
          assertionResults: [
            assertion(['sum'], 'adds', 'passed'),
            assertion(['sum'], 'fails', 'failed'),
            assertion(['sum'], 'skipped', 'pending'),
          ],
        },
        {
          name: `${checkout}/test/other.test.js`,
          status: 'passed',
          assertionResults: [assertion([], 'other works', 'passed')],
        },
        // a file that did not load: no tests, but the run failed there
        { name: `${checkout}/test/broken.test.js`, status: 'failed', message: 'SyntaxError', assertionResults: [] },
      ],
    }) + '\n';

  it('names tests `file > describe > title` with the file relative to the checkout, and lists a file that failed to run', () => {
    expect(parseJestJsonFile(report(4), checkout)).toEqual({
      runner: 'jest',
      passed: 2,
      failed: 1,
      skipped: 1,
      passedTests: ['test/sum.test.js > sum > adds', 'test/other.test.js > other works'],
      failedTests: ['test/sum.test.js > sum > fails', 'test/broken.test.js'],
    });
  });

  it('refuses a report whose totals disagree with its tests, or that is not jest’s', () => {
    expect(parseJestJsonFile(report(5), checkout)).toBeNull();
    expect(parseJestJsonFile('{"testResults": 3}', checkout)).toBeNull();
    expect(parseJestJsonFile('{"numFailedTestSuites":0,"testResults":[', checkout)).toBeNull();
  });
});

describe('vitest --reporter=junit', () => {
  const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="4" failures="1" errors="0" time="0.009">
    <testsuite name="test/other.test.js" tests="1" failures="0" errors="0" skipped="0">
        <testcase classname="test/other.test.js" name="other works" time="0.0008"></testcase>
    </testsuite>
    <testsuite name="test/sum.test.js" tests="3" failures="1" errors="0" skipped="1">
        <testcase classname="test/sum.test.js" name="sum &gt; adds" time="0.0009"></testcase>
        <testcase classname="test/sum.test.js" name="sum &gt; fails" time="0.005">
            <failure message="expected 1 to be 2" type="AssertionError">AssertionError: expected 1 to be 2</failure>
        </testcase>
        <testcase classname="test/sum.test.js" name="sum &gt; skipped" time="0"><skipped/></testcase>
    </testsuite>
</testsuites>`;

  it('names tests `file > describe > title`, as vitest’s own output does', () => {
    expect(parseJUnitXml(xml, { runner: 'vitest', name: vitestJUnitName })).toEqual({
      runner: 'vitest',
      passed: 2,
      failed: 1,
      skipped: 1,
      passedTests: ['test/other.test.js > other works', 'test/sum.test.js > sum > adds'],
      failedTests: ['test/sum.test.js > sum > fails'],
    });
  });
});

describe('node --test-reporter=junit', () => {
  // Node 20: a describe block, and a test with subtests, is a <testsuite>; the classname is always `test`.
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<testsuites>
	<testsuite name="sum" time="0.002" disabled="0" errors="0" tests="2" failures="1" skipped="0" hostname="vm">
		<testcase name="adds" time="0.0007" classname="test"/>
		<testcase name="fails" time="0.0008" classname="test" failure="1 == 2">
			<failure type="testCodeFailure" message="1 == 2">AssertionError</failure>
		</testcase>
	</testsuite>
	<testcase name="top level" time="0.0001" classname="test"/>
	<testcase name="skipped one" time="0.00007" classname="test">
		<skipped type="skipped" message="true"/>
	</testcase>
	<testsuite name="parent" time="0.0004" disabled="0" errors="0" tests="1" failures="0" skipped="0" hostname="vm">
		<testcase name="child" time="0.0001" classname="test"/>
	</testsuite>
	<!-- tests 6 -->
</testsuites>`;

  it('names tests by their describe blocks and parent tests', () => {
    expect(parseJUnitXml(xml, { runner: 'node:test', name: nodeTestJUnitName })).toEqual({
      runner: 'node:test',
      passed: 3,
      failed: 1,
      skipped: 1,
      passedTests: ['sum > adds', 'top level', 'parent > child'],
      failedTests: ['sum > fails'],
    });
  });
});

describe('pytest --junitxml with junit_family=xunit1', () => {
  const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="6" time="0.039">
<testcase classname="tests.test_total" name="test_total" file="tests/test_total.py" line="1" time="0.000" />
<testcase classname="tests.test_total" name="test_fail" file="tests/test_total.py" line="2" time="0.000"><failure message="assert 1 == 2">E   assert 1 == 2</failure></testcase>
<testcase classname="tests.test_total.TestK" name="test_param[a.b]" file="tests/test_total.py" line="5" time="0.000" />
<testcase classname="tests.test_total" name="test_skip" file="tests/test_total.py" line="7" time="0.000"><skipped type="pytest.skip" message="unconditional skip">skip</skipped></testcase>
<testcase classname="test_top" name="test_at_root" file="test_top.py" line="0" time="0.000" />
<testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">ImportError</error></testcase>
</testsuite></testsuites>`;

  it('names tests by their node id, the file from the `file` attribute and classes from the classname', () => {
    expect(parseJUnitXml(xml, { runner: 'pytest', name: pytestJUnitName })).toEqual({
      runner: 'pytest',
      passed: 3,
      failed: 2,
      skipped: 1,
      passedTests: [
        'tests/test_total.py::test_total',
        'tests/test_total.py::TestK::test_param[a.b]',
        'test_top.py::test_at_root',
      ],
      // a module that failed to collect has no classname
      failedTests: ['tests/test_total.py::test_fail', 'tests.test_broken'],
    });
  });

  it('falls back to the dotted classname when there is no file attribute (xunit2) or it disagrees', () => {
    expect(pytestJUnitName({ name: 'test_adds', classname: 'tests.test_sum.TestSum', suites: [] })).toBe(
      'tests.test_sum.TestSum::test_adds',
    );
    expect(
      pytestJUnitName({ name: 'test_adds', classname: 'other.module', file: 'tests/test_sum.py', suites: [] }),
    ).toBe('other.module::test_adds');
  });
});

describe('mocha, through the reporter a composite tests script gets (report-preload.ts)', () => {
  const checkout = '/work/checkout';
  const test = (file: string | null, titlePath: string[], state: string) => ({ file, titlePath, state });
  const report = JSON.stringify({
    tests: [
      test(`${checkout}/test/sum.spec.js`, ['sum', 'adds'], 'passed'),
      test(`${checkout}/test/sum.spec.js`, ['sum', 'fails'], 'failed'),
      test(`${checkout}/test/sum.spec.js`, ['sum', 'later'], 'pending'),
      test(`${checkout}/test/top.spec.js`, ['top level'], 'passed'),
      // a hook that failed; a test from outside the checkout keeps its path; one with no file, its titles
      test(`${checkout}/test/db.spec.js`, ['db', '"before all" hook for "connects"'], 'failed'),
      test('/elsewhere/shared.spec.js', ['shared'], 'passed'),
      test(null, ['from a root hook'], 'passed'),
    ],
  });

  it('names tests `file > describe > title` with the file relative to the checkout', () => {
    expect(parseMochaReportFile(report, checkout)).toEqual({
      runner: 'mocha',
      passed: 4,
      failed: 2,
      skipped: 1,
      passedTests: [
        'test/sum.spec.js > sum > adds',
        'test/top.spec.js > top level',
        '/elsewhere/shared.spec.js > shared',
        'from a root hook',
      ],
      failedTests: ['test/sum.spec.js > sum > fails', 'test/db.spec.js > db > "before all" hook for "connects"'],
    });
  });

  it('refuses anything else', () => {
    expect(
      parseMochaReportFile('{"tests": [{"titlePath": [], "state": "passed", "file": null}]}', checkout),
    ).toBeNull();
    expect(
      parseMochaReportFile('{"tests": [{"titlePath": ["a"], "state": "done", "file": null}]}', checkout),
    ).toBeNull();
    expect(parseMochaReportFile('{"stats": {}}', checkout)).toBeNull();
    expect(parseMochaReportFile('{"tests": [', checkout)).toBeNull();
  });
});
