import { acceptanceTestsOnly } from '../../activities/verification/differential-run';
import { runnerCommand } from '../../activities/verification/test-runner-command';
import { differentialFindings } from '../../analysis/verification/differential-findings';
import type { TestReport } from '../../analysis/test-reports';

// The differential run (issue 27): which argv runs only the acceptance tests, per runner, and what a
// disagreement between the gate and the run without CI is.

const only = (argv: string[], titles: string[], scripts: Record<string, string> = {}) =>
  acceptanceTestsOnly(runnerCommand(argv, scripts)!, titles);

test('each runner gets its own name filter; a title that is not a plain name runs the whole gate', () => {
  expect(only(['npm', 'test'], ['adds 10%'], { test: 'jest' })).toEqual(['npm', 'test', '--', '-t', '(?:adds 10%)']);
  expect(only(['npx', 'vitest', 'run'], ['a.b', 'c'])).toEqual(['npx', 'vitest', 'run', '-t', '(?:a\\.b|c)']);
  expect(only(['node', '--test', 'test/'], ['takes 10% off'])).toEqual([
    'node',
    '--test',
    '--test-name-pattern=(?:takes 10% off)',
    'test/',
  ]);
  expect(only(['python3', '-m', 'pytest'], ['test_a', 'test_b[1]'])).toEqual([
    'python3',
    '-m',
    'pytest',
    '-k',
    'test_a or test_b',
  ]);
  expect(only(['python3', '-m', 'pytest'], ['a test with spaces'])).toBeNull();
  expect(only(['go', 'test', './...'], ['example.com/shop/TestTotal/small', 'TestDiscount'])).toEqual([
    'go',
    'test',
    '-run',
    '^(?:TestTotal|TestDiscount)$',
    './...',
  ]);
});

const report = (passed: string[], failed: string[] = []): TestReport => ({
  runner: 'jest',
  passed: passed.length,
  failed: failed.length,
  skipped: 0,
  passedTests: passed,
  failedTests: failed,
});

describe('differentialFindings', () => {
  const gate = report(['test/price.test.js > total > takes 10% off', 'test/price.test.js > total > small']);
  const locate = () => ({ file: 'test/price.test.js', line: 4 });

  test('an acceptance test that fails without CI is PASSES_ONLY_UNDER_CI at its declaration', () => {
    const run = { report: report([], ['test/price.test.js > total > takes 10% off']), failureReason: '1 test failed' };
    expect(differentialFindings(['takes 10% off'], gate, run, locate)).toEqual([
      expect.objectContaining({
        rule: 'PASSES_ONLY_UNDER_CI',
        location: { file: 'test/price.test.js', startLine: 4, endLine: 4 },
        evidence: expect.stringContaining('failed when the acceptance tests ran again with CI unset (1 test failed)'),
      }),
    ]);
  });

  test('one that did not run at all disagrees too; agreement, other tests and a run without a report say nothing', () => {
    expect(differentialFindings(['takes 10% off'], gate, { report: report([]), failureReason: null }, locate)).toEqual([
      expect.objectContaining({ evidence: expect.stringContaining('did not pass') }),
    ]);
    const agreed = { report: report(['test/price.test.js > total > takes 10% off']), failureReason: null };
    expect(differentialFindings(['takes 10% off'], gate, agreed, locate)).toEqual([]);
    expect(differentialFindings(['takes 10% off'], gate, { report: null, failureReason: 'exit 1' }, locate)).toEqual(
      [],
    );
  });
});
