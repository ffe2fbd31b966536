import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';
import { childEnvironment } from '../../activities/process/child-environment';
import { runCommand } from '../../activities/process/run-command';
import { handOver } from '../../activities/sandbox/hand-over';
import { probeSandbox } from '../../activities/sandbox/probe';
import { instrumentTestsGate } from '../../activities/verification/test-reporter';
import { normaliseOutput } from '../../analysis/test-reports/report';
import { runnerPackages, type RunnerPackages } from '../support/runner-packages';
import { testSandbox } from '../support/sandbox';

// Real runners, run as verification runs a tests gate (bubblewrap, the report directory writable
// outside the checkout, path arguments confined), over projects with several test files and no
// verbose flag: every test comes back by name, qualified by its file where the runner gives it, and
// failed tests are named too.

const sandbox = testSandbox('bwrap');
let root: string;
let packages: RunnerPackages;

beforeAll(async () => {
  await probeSandbox(sandbox);
  // Installed once per version set and machine (runner-packages.ts); the first run needs the registries.
  packages = runnerPackages();
}, 900_000);

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'test-reporter-run-')));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/**
 * Runs the instrumented tests gate over `files` and returns what was read, with the command's output;
 * `runs` times over the same checkout (each with its report directory emptied, as every run gets), the last.
 */
async function runTestsGate(
  argv: string[],
  files: Record<string, string>,
  options: { nodeModules?: boolean; runs?: number } = {},
) {
  const checkout = path.join(root, 'checkout');
  const buildDir = path.join(root, 'build');
  const reportDir = path.join(buildDir, 'test-reports', 'tests');
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(checkout, file)), { recursive: true });
    fs.writeFileSync(path.join(checkout, file), text);
  }
  if (options.nodeModules) fs.symlinkSync(packages.nodeModules, path.join(checkout, 'node_modules'));

  const gate: ResolvedGate = {
    gate: 'tests',
    argv,
    timeoutSeconds: 120,
    source: 'contract',
    detail: 'integration test',
  };
  const once = async () => {
    fs.rmSync(reportDir, { recursive: true, force: true });
    fs.mkdirSync(reportDir, { recursive: true });
    await handOver(sandbox, checkout, buildDir);
    const tests = await instrumentTestsGate(gate, checkout, reportDir);
    const result = await runCommand({
      argv: tests.argv,
      cwd: checkout,
      workspaceRoot: checkout,
      timeoutMs: 120_000,
      env: childEnvironment(tests.env),
      sandbox: {
        sandbox,
        policy: { workDir: checkout, writable: [buildDir], readOnly: [packages.dir], egress: null },
      },
      outputCapBytes: 1024 * 1024,
      confinePathArguments: true,
    });
    const output = `${result.stdout}\n${result.stderr}`;
    const report = await tests.read(output);
    return { argv: tests.argv, result, output, report, reportFiles: fs.readdirSync(reportDir) };
  };
  for (let i = 1; i < (options.runs ?? 1); i++) await once();
  return once();
}

const sorted = (names: string[] | undefined) => [...(names ?? [])].sort();

test('jest across several files, through `npm test`: names from its JSON report', async () => {
  const run = await runTestsGate(
    ['npm', 'test'],
    {
      'package.json': JSON.stringify({ name: 'jest-project', private: true, scripts: { test: 'jest' } }),
      'test/sum.test.js':
        "describe('sum', () => {\n  test('adds', () => expect(1 + 1).toBe(2));\n  test('fails', () => expect(1).toBe(2));\n});\n",
      'test/format.test.js': "test('formats', () => expect(String(1)).toBe('1'));\n",
      'test/nested/deep.test.js': "describe('outer', () => describe('inner', () => test('works', () => {})));\n",
    },
    { nodeModules: true },
  );
  expect(run.argv.slice(0, 4)).toEqual(['npm', 'test', '--', '--json']);
  expect(run.reportFiles).toEqual(['jest.json']);
  // jest's own report is still printed
  expect(run.output).toMatch(/^Tests: +1 failed, 3 passed, 4 total$/m);
  expect(run.result.exitCode).toBe(1);
  expect(run.report).toMatchObject({
    runner: 'jest',
    passed: 3,
    failed: 1,
    skipped: 0,
    failedTests: ['test/sum.test.js > sum > fails'],
  });
  expect(sorted(run.report?.passedTests)).toEqual([
    'test/format.test.js > formats',
    'test/nested/deep.test.js > outer > inner > works',
    'test/sum.test.js > sum > adds',
  ]);
}, 180_000);

test('vitest across several files, through `npm test`: names from its JUnit report', async () => {
  const run = await runTestsGate(
    ['npm', 'test'],
    {
      'package.json': JSON.stringify({
        name: 'vitest-project',
        private: true,
        type: 'module',
        scripts: { test: 'vitest run' },
      }),
      'test/sum.test.js':
        "import { describe, expect, test } from 'vitest';\ndescribe('sum', () => {\n  test('adds', () => expect(1 + 1).toBe(2));\n  test('fails', () => expect(1).toBe(2));\n  test.skip('skipped', () => {});\n});\n",
      'test/format.test.js':
        "import { expect, test } from 'vitest';\ntest('formats', () => expect(String(1)).toBe('1'));\n",
    },
    { nodeModules: true },
  );
  expect(run.reportFiles).toEqual(['junit.xml']);
  // the default reporter still prints the summary
  expect(normaliseOutput(run.output)).toMatch(/Tests {2}1 failed \| 2 passed \| 1 skipped \(4\)/);
  expect(run.report).toMatchObject({
    runner: 'vitest',
    passed: 2,
    failed: 1,
    skipped: 1,
    failedTests: ['test/sum.test.js > sum > fails'],
  });
  expect(sorted(run.report?.passedTests)).toEqual(['test/format.test.js > formats', 'test/sum.test.js > sum > adds']);
}, 180_000);

test('a composite script: two jest runs chained through npm run, each reporting through the preloaded module', async () => {
  const jestRun = await runTestsGate(
    ['npm', 'test'],
    {
      'package.json': JSON.stringify({
        name: 'composite-jest',
        private: true,
        scripts: { test: 'npm run test:node && npm run test:edge', 'test:node': 'jest node', 'test:edge': 'jest edge' },
      }),
      'node/sum.test.js': "test('adds on node', () => expect(1 + 1).toBe(2));\n",
      'edge/sum.test.js': "describe('edge', () => test('adds on the edge', () => expect(2 + 2).toBe(4)));\n",
    },
    { nodeModules: true },
  );
  expect(jestRun.argv).toEqual(['npm', 'test']);
  expect(jestRun.result.exitCode).toBe(0);
  expect(jestRun.reportFiles.filter((f) => f.endsWith('.json'))).toHaveLength(2);
  expect(jestRun.report).toMatchObject({ runner: 'jest', passed: 2, failed: 0, skipped: 0, failedTests: [] });
  expect(sorted(jestRun.report?.passedTests)).toEqual([
    'edge/sum.test.js > edge > adds on the edge',
    'node/sum.test.js > adds on node',
  ]);
}, 180_000);

test('a composite script: vitest after another command, reporting through the preloaded module', async () => {
  const vitestRun = await runTestsGate(
    ['npm', 'test'],
    {
      'package.json': JSON.stringify({
        name: 'composite-vitest',
        private: true,
        type: 'module',
        scripts: { test: 'node -e "process.exitCode = 0" && vitest run' },
      }),
      'test/sum.test.js':
        "import { expect, test } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\ntest('fails', () => expect(1).toBe(2));\n",
    },
    { nodeModules: true },
  );
  expect(vitestRun.result.exitCode).toBe(1);
  // The default reporter still prints.
  expect(normaliseOutput(vitestRun.output)).toMatch(/Tests {2}1 failed \| 1 passed \(2\)/);
  expect(vitestRun.report).toMatchObject({
    runner: 'vitest',
    passed: 1,
    failed: 1,
    passedTests: ['test/sum.test.js > adds'],
    failedTests: ['test/sum.test.js > fails'],
  });
}, 180_000);

test('run-s over mocha, node --test and pytest scripts: each runner reports through the preloaded files', async () => {
  const run = await runTestsGate(
    ['npm', 'test'],
    {
      'package.json': JSON.stringify({
        name: 'composite-runners',
        private: true,
        scripts: {
          // npm-run-all2: every script, on after a failing one.
          test: 'run-s --continue-on-error test:*',
          'test:mocha': 'mocha',
          'test:node': 'node --test node-test/',
          'test:python': `${packages.python} -m pytest tests`,
        },
      }),
      'test/total.spec.js': [
        "const assert = require('node:assert');",
        "describe('total', () => {",
        "  it('adds', () => assert.equal(1 + 1, 2));",
        "  it('fails', () => assert.equal(1, 2));",
        "  it.skip('later', () => {});",
        '});',
        '',
      ].join('\n'),
      'node-test/total.test.js': [
        "const { describe, test } = require('node:test');",
        "const assert = require('node:assert');",
        "describe('total', () => {",
        "  test('adds', () => assert.equal(1 + 1, 2));",
        "  test('fails', () => assert.equal(1, 2));",
        '});',
        '',
      ].join('\n'),
      'tests/test_total.py': 'def test_adds():\n    assert 1 + 1 == 2\n\ndef test_fails():\n    assert 1 == 2\n',
    },
    { nodeModules: true },
  );
  expect(run.result.exitCode).not.toBe(0);
  expect(
    run.reportFiles
      .filter((f) => /-\d+-\d+\.(?:json|xml)$/.test(f))
      .sort()
      .map((f) => f.split('-')[0]),
  ).toEqual(['mocha', 'node', 'pytest']);
  // Each runner's own output is still there: mocha's spec reporter, node's, pytest's.
  expect(run.output).toMatch(/^ {2}1 passing \(\d+ms\)$/m);
  expect(run.output).toMatch(/^ℹ pass 1$/m);
  expect(run.output).toMatch(/=+ 1 failed, 1 passed in [\d.]+s =+/);
  expect(run.report).toMatchObject({ passed: 3, failed: 3, skipped: 1 });
  expect(sorted(run.report?.passedTests)).toEqual([
    'test/total.spec.js > total > adds',
    'tests/test_total.py::test_adds',
    'total > adds',
  ]);
  expect(sorted(run.report?.failedTests)).toEqual([
    'test/total.spec.js > total > fails',
    'tests/test_total.py::test_fails',
    'total > fails',
  ]);
}, 180_000);

test('concurrently running jest and vitest: both report', async () => {
  const run = await runTestsGate(
    ['npm', 'test'],
    {
      'package.json': JSON.stringify({
        name: 'composite-concurrently',
        private: true,
        scripts: { test: 'concurrently --names jest,vitest "jest jest-tests" "vitest run vitest-tests"' },
      }),
      'jest-tests/sum.test.js': "describe('sum', () => test('adds', () => expect(1 + 1).toBe(2)));\n",
      'vitest-tests/sum.test.mjs':
        "import { describe, expect, test } from 'vitest';\ndescribe('sum', () => test('adds', () => expect(2 + 2).toBe(4)));\n",
    },
    { nodeModules: true },
  );
  expect(run.result.exitCode).toBe(0);
  expect(run.report).toMatchObject({ passed: 2, failed: 0 });
  expect(sorted(run.report?.passedTests)).toEqual([
    'jest-tests/sum.test.js > sum > adds',
    'vitest-tests/sum.test.mjs > sum > adds',
  ]);
}, 180_000);

/** npm workspaces: jest in one member and mocha in another, both with a `total > adds`, and a root `test` script. */
function workspace(test: string, files: Record<string, string> = {}): Record<string, string> {
  return {
    'package.json': JSON.stringify({
      name: 'shop',
      private: true,
      packageManager: 'npm@10.9.2',
      workspaces: ['packages/*'],
      scripts: { test },
    }),
    'packages/cart/package.json': JSON.stringify({ name: '@shop/cart', scripts: { test: 'jest' } }),
    'packages/cart/test/total.test.js': "describe('total', () => test('adds', () => expect(1 + 1).toBe(2)));\n",
    'packages/labels/package.json': JSON.stringify({ name: '@shop/labels', scripts: { test: 'mocha' } }),
    'packages/labels/test/total.spec.js':
      "const assert = require('node:assert');\ndescribe('total', () => it('adds', () => assert.equal(2 + 2, 4)));\n",
    ...files,
  };
}
const workspaceTests = [
  'packages/cart/test/total.test.js > total > adds',
  'packages/labels/test/total.spec.js > total > adds',
];

test('turbo run test (strict environment mode), run twice: the second run executes the tasks again, and each runner reports', async () => {
  const run = await runTestsGate(
    ['npm', 'test'],
    workspace('turbo run test', { 'turbo.json': JSON.stringify({ tasks: { test: { outputs: [] } } }) }),
    { nodeModules: true, runs: 2 },
  );
  expect(run.result.exitCode).toBe(0);
  // turbo hands its tasks only the variables it knows, NODE_OPTIONS among them; a cached result is not replayed.
  expect(run.output).toMatch(/cache bypass, force executing/);
  expect(run.output).not.toMatch(/cache hit/);
  expect(sorted(run.report?.passedTests)).toEqual(workspaceTests);
}, 180_000);

test('nx run-many -t test, run twice: the second run executes the tasks again, and each runner reports', async () => {
  const run = await runTestsGate(
    ['npm', 'test'],
    workspace('nx run-many -t test', { 'nx.json': JSON.stringify({ targetDefaults: { test: { cache: true } } }) }),
    { nodeModules: true, runs: 2 },
  );
  expect(run.result.exitCode).toBe(0);
  expect(run.output).not.toMatch(/existing outputs match the cache|\[local cache\]/);
  expect(sorted(run.report?.passedTests)).toEqual(workspaceTests);
}, 180_000);

test('npm workspaces: jest in one member and vitest in another, each run in its own directory, named from the checkout root', async () => {
  const run = await runTestsGate(
    ['npm', 'test', '--workspaces', '--if-present'],
    {
      'package.json': JSON.stringify({ name: 'shop', private: true, workspaces: ['packages/*'] }),
      'packages/cart/package.json': JSON.stringify({ name: '@shop/cart', scripts: { test: 'jest' } }),
      'packages/cart/test/total.test.js':
        "describe('total', () => test('adds', () => expect(1 + 1).toBe(2)));\ntest('fails', () => expect(1).toBe(2));\n",
      'packages/labels/package.json': JSON.stringify({
        name: '@shop/labels',
        type: 'module',
        scripts: { test: 'vitest run' },
      }),
      'packages/labels/test/label.test.js':
        "import { describe, expect, test } from 'vitest';\ndescribe('label', () => test('adds', () => expect(2 + 2).toBe(4)));\n",
      'packages/docs/package.json': JSON.stringify({ name: '@shop/docs' }),
    },
    { nodeModules: true },
  );
  expect(run.argv).toEqual(['npm', 'test', '--workspaces', '--if-present']);
  expect(run.result.exitCode).not.toBe(0);
  // Two packages both have a `… > adds`: the package's directory tells them apart.
  expect(sorted(run.report?.passedTests)).toEqual([
    'packages/cart/test/total.test.js > total > adds',
    'packages/labels/test/label.test.js > label > adds',
  ]);
  expect(run.report?.failedTests).toEqual(['packages/cart/test/total.test.js > fails']);
}, 180_000);

test('node --test over a directory: names from its JUnit report', async () => {
  const run = await runTestsGate(['node', '--test', 'test/'], {
    'test/a.test.js': [
      "const { describe, test } = require('node:test');",
      "const assert = require('node:assert');",
      "describe('sum', () => {",
      "  test('adds', () => assert.equal(1 + 1, 2));",
      "  test('fails', () => assert.equal(1, 2));",
      '});',
      '',
    ].join('\n'),
    'test/b.test.js':
      "const { test } = require('node:test');\ntest('b works', () => {});\ntest('parent', async (t) => { await t.test('child', () => {}); });\n",
  });
  expect(run.argv).toEqual([
    'node',
    '--test',
    expect.stringMatching(/^--test-reporter=spec$/),
    expect.any(String),
    expect.any(String),
    expect.any(String),
    'test/',
  ]);
  expect(run.reportFiles).toEqual(['junit.xml']);
  // the spec reporter still prints to the output; its count includes the parent test, which JUnit
  // shows as a suite of its subtests
  expect(run.output).toMatch(/^ℹ pass 4$/m);
  expect(run.report).toMatchObject({
    runner: 'node:test',
    passed: 3,
    failed: 1,
    skipped: 0,
    failedTests: ['sum > fails'],
  });
  expect(sorted(run.report?.passedTests)).toEqual(['b works', 'parent > child', 'sum > adds']);
}, 180_000);

test('pytest over a tests/ directory: node ids from its JUnit report', async () => {
  const run = await runTestsGate([packages.python, '-m', 'pytest'], {
    'tests/test_total.py': [
      'import pytest',
      '',
      'def test_total():',
      '    assert 1 + 1 == 2',
      '',
      'def test_fails():',
      '    assert 1 == 2',
      '',
      'class TestTotals:',
      '    @pytest.mark.parametrize("n", [1, 2])',
      '    def test_positive(self, n):',
      '        assert n > 0',
      '',
    ].join('\n'),
    'tests/test_other.py': 'def test_other():\n    pass\n',
  });
  expect(run.argv).toEqual([packages.python, '-m', 'pytest']);
  expect(run.reportFiles).toEqual(['junit.xml']);
  expect(run.output).toMatch(/=+ 1 failed, 4 passed in [\d.]+s =+/);
  expect(run.report).toMatchObject({
    runner: 'pytest',
    passed: 4,
    failed: 1,
    skipped: 0,
    failedTests: ['tests/test_total.py::test_fails'],
  });
  expect(sorted(run.report?.passedTests)).toEqual([
    'tests/test_other.py::test_other',
    'tests/test_total.py::TestTotals::test_positive[1]',
    'tests/test_total.py::TestTotals::test_positive[2]',
    'tests/test_total.py::test_total',
  ]);
}, 180_000);
