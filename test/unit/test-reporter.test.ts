import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';
import { instrumentTestsGate } from '../../activities/verification/test-reporter';

// Which reporter the service adds to a tests gate, by the command the gate runs (directly or through a
// one-command package.json script), and which commands it leaves alone.

let root: string;
let reportDir: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'test-reporter-')));
  reportDir = path.join(root, 'report');
  fs.mkdirSync(reportDir);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const tests = (argv: string[], extra: Partial<ResolvedGate> = {}): ResolvedGate => ({
  gate: 'tests',
  argv,
  timeoutSeconds: 60,
  source: 'contract',
  detail: 'test',
  ...extra,
});

/** A checkout with a package.json holding `scripts`. */
function checkout(scripts: Record<string, string> = {}): string {
  const dir = path.join(root, 'checkout');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ scripts }));
  return dir;
}

const JEST_FLAGS = () => ['--json', `--outputFile=${reportDir}/jest.json`];
const VITEST_FLAGS = () => ['--reporter=default', '--reporter=junit', `--outputFile.junit=${reportDir}/junit.xml`];
const NODE_TEST_FLAGS = () => [
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=junit',
  `--test-reporter-destination=${reportDir}/junit.xml`,
];

describe('a package-manager gate whose script is one runner command gets the runner’s report flags', () => {
  it.each<[string, string[], string, () => string[]]>([
    ['npm test → jest', ['npm', 'test'], 'jest', () => ['npm', 'test', '--', ...JEST_FLAGS()]],
    ['pnpm test → jest --coverage', ['pnpm', 'test'], 'jest --coverage', () => ['pnpm', 'test', '--', ...JEST_FLAGS()]],
    [
      'pnpm run test passes arguments as they are',
      ['pnpm', 'run', 'test'],
      'jest',
      () => ['pnpm', 'run', 'test', ...JEST_FLAGS()],
    ],
    ['yarn test → NODE_ENV=test jest', ['yarn', 'test'], 'NODE_ENV=test jest', () => ['yarn', 'test', ...JEST_FLAGS()]],
    [
      'npm run with cross-env',
      ['npm', 'run', 'test'],
      'cross-env TZ=UTC jest --runInBand',
      () => ['npm', 'run', 'test', '--', ...JEST_FLAGS()],
    ],
    ['npx jest', ['npm', 'test'], 'npx jest', () => ['npm', 'test', '--', ...JEST_FLAGS()]],
    [
      'jest through node',
      ['npm', 'test'],
      'node --experimental-vm-modules node_modules/jest/bin/jest.js',
      () => ['npm', 'test', '--', ...JEST_FLAGS()],
    ],
    [
      'the gate’s own script arguments stay first',
      ['npm', 'test', '--', '--ci'],
      'jest',
      () => ['npm', 'test', '--', '--ci', ...JEST_FLAGS()],
    ],
    [
      'jest --json already: only the file is added',
      ['npm', 'test'],
      'jest --json',
      () => ['npm', 'test', '--', `--outputFile=${reportDir}/jest.json`],
    ],
    ['vitest', ['npm', 'test'], 'vitest', () => ['npm', 'test', '--', ...VITEST_FLAGS()]],
    [
      'vitest run with its own reporter keeps it',
      ['yarn', 'test'],
      'vitest run --reporter=dot',
      () => ['yarn', 'test', '--reporter=junit', `--outputFile.junit=${reportDir}/junit.xml`],
    ],
    ['node --test with no files', ['npm', 'test'], 'node --test', () => ['npm', 'test', '--', ...NODE_TEST_FLAGS()]],
  ])('%s', async (_name, argv, script, expected) => {
    const gate = await instrumentTestsGate(tests(argv), checkout({ test: script }), reportDir);
    expect(gate.argv).toEqual(expected());
    expect(gate.env).toEqual({});
  });
});

describe('a direct runner command gets its report flags where the runner takes them', () => {
  it.each<[string[], () => string[]]>([
    [['npx', 'jest', '--ci'], () => ['npx', 'jest', '--ci', ...JEST_FLAGS()]],
    [['node_modules/.bin/vitest', 'run'], () => ['node_modules/.bin/vitest', 'run', ...VITEST_FLAGS()]],
    // node takes options only before the test files
    [['node', '--test', 'test/'], () => ['node', '--test', ...NODE_TEST_FLAGS(), 'test/']],
    [
      ['node', '--import', 'tsx', '--test', 'test/a.test.ts'],
      () => ['node', '--import', 'tsx', '--test', ...NODE_TEST_FLAGS(), 'test/a.test.ts'],
    ],
    // … and after the options that follow --test, a value given apart included
    [
      ['node', '--test', '--require', './support/setup.js', 'test/'],
      () => ['node', '--test', '--require', './support/setup.js', ...NODE_TEST_FLAGS(), 'test/'],
    ],
    [
      ['node', '--test', '--test-name-pattern=(?:adds)'],
      () => ['node', '--test', '--test-name-pattern=(?:adds)', ...NODE_TEST_FLAGS()],
    ],
    [['go', 'test', './...'], () => ['go', 'test', './...', '-json']],
    [['go', 'test', './...', '-args', '-x'], () => ['go', 'test', '-json', './...', '-args', '-x']],
  ])('%j', async (argv, expected) => {
    const gate = await instrumentTestsGate(tests(argv), checkout(), reportDir);
    expect(gate.argv).toEqual(expected());
  });

  it.each([
    [['python3', '-m', 'pytest', '-rA']],
    [['.venv/bin/pytest']],
    [['uv', 'run', 'pytest', 'tests']],
    [['npm', 'test']],
  ])('pytest (%j) gets its report through PYTEST_ADDOPTS, its argv unchanged', async (argv) => {
    const gate = await instrumentTestsGate(tests(argv), checkout({ test: 'pytest' }), reportDir);
    expect(gate.argv).toEqual(argv);
    expect(gate.env).toEqual({ PYTEST_ADDOPTS: `-rA --junitxml='${reportDir}/junit.xml' -o junit_family=xunit1` });
  });
});

describe('commands the service cannot instrument with certainty run as they are', () => {
  it.each<[string, string[], Record<string, string>]>([
    ['a composite script', ['npm', 'test'], { test: 'jest && eslint .' }],
    ['a script choosing its own output file', ['npm', 'test'], { test: 'jest --json --outputFile=r.json' }],
    ['vitest in watch mode', ['npm', 'test'], { test: 'vitest watch' }],
    ['vitest writing its own report', ['npm', 'test'], { test: 'vitest run --outputFile=r.json' }],
    ['node --test with its own reporter', ['npm', 'test'], { test: 'node --test --test-reporter=tap' }],
    [
      'node --test with files in a script (options after them would be files)',
      ['npm', 'test'],
      { test: 'node --test test/' },
    ],
    ['mocha', ['npm', 'test'], { test: 'mocha' }],
    ['react-scripts', ['npm', 'test'], { test: 'react-scripts test' }],
    ['bun', ['bun', 'run', 'test'], { test: 'jest' }],
    ['a pre-script npm would run too', ['npm', 'test'], { pretest: 'jest unit', test: 'jest' }],
    ['package-manager flags before the script', ['npm', '--prefix', 'web', 'test'], { test: 'jest' }],
    ['pnpm run passing a `--` on to jest', ['pnpm', 'run', 'test', '--', '--ci'], { test: 'jest' }],
    ['a script that does not exist', ['npm', 'run', 'unit'], { test: 'jest' }],
    ['jest with a `--` of its own', ['npx', 'jest', '--', 'a'], {}],
    ['pytest with its own PYTEST_ADDOPTS', ['env', 'PYTEST_ADDOPTS=-x', 'pytest'], {}],
    ['pytest writing its own JUnit', ['pytest', '--junitxml=r.xml'], {}],
    ['go test -json already', ['go', 'test', '-json', './...'], {}],
    ['cargo (libtest lists every test)', ['cargo', 'test'], {}],
    ['make', ['make', 'test'], {}],
  ])('%s', async (_name, argv, scripts) => {
    const gate = await instrumentTestsGate(tests(argv), checkout(scripts), reportDir);
    expect(gate.argv).toEqual(argv);
    // Nothing, or what a runner the command starts can take up by itself (report-preload.ts).
    expect([[], ['NODE_OPTIONS', 'NX_SKIP_NX_CACHE', 'PYTHONPATH', 'TURBO_FORCE']]).toContainEqual(
      Object.keys(gate.env).sort(),
    );
  });

  it('a composite script gets the preloaded reporters: NODE_OPTIONS and PYTHONPATH naming files in the report directory, no cached task results', async () => {
    const gate = await instrumentTestsGate(tests(['npm', 'test']), checkout({ test: 'jest && eslint .' }), reportDir);
    const dir = fs.realpathSync(reportDir);
    const preload = path.join(dir, 'report-preload.cjs');
    expect(gate.env).toEqual({
      NODE_OPTIONS: `--require ${JSON.stringify(preload)}`,
      PYTHONPATH: path.join(dir, 'python'),
      TURBO_FORCE: 'true',
      NX_SKIP_NX_CACHE: 'true',
    });
    expect(fs.readFileSync(preload, 'utf8')).toContain('process.argv.push(');
    expect(fs.readFileSync(path.join(dir, 'mocha-reporter.cjs'), 'utf8')).toContain("runner.on('pass'");
    expect(fs.readFileSync(path.join(dir, 'python/sitecustomize.py'), 'utf8')).toContain('PYTEST_ADDOPTS');
  });

  it('a gate with a declared junitReport keeps it, and a stale report is removed before the run', async () => {
    const dir = checkout();
    fs.mkdirSync(path.join(dir, 'reports'));
    fs.writeFileSync(
      path.join(dir, 'reports/junit.xml'),
      '<testsuite tests="1"><testcase name="planted"/></testsuite>',
    );
    const gate = await instrumentTestsGate(
      tests(['npm', 'test'], { junitReport: 'reports/junit.xml' }),
      dir,
      reportDir,
    );
    expect(gate).toMatchObject({ argv: ['npm', 'test'], env: {} });
    expect(fs.existsSync(path.join(dir, 'reports/junit.xml'))).toBe(false);
    expect(await gate.read('')).toBeNull();
  });
});

describe('reading the run’s report', () => {
  const jestReport = (file: string) =>
    JSON.stringify({
      numFailedTestSuites: 0,
      numTotalTests: 1,
      testResults: [
        {
          name: file,
          status: 'passed',
          assertionResults: [{ ancestorTitles: ['sum'], title: 'adds', status: 'passed' }],
        },
      ],
    });
  const jestOutput = 'Tests:       2 passed, 2 total\n';

  it('reads the file the runner wrote to the report directory, names qualified by file', async () => {
    const dir = checkout({ test: 'jest' });
    const gate = await instrumentTestsGate(tests(['npm', 'test']), dir, reportDir);
    fs.writeFileSync(path.join(reportDir, 'jest.json'), jestReport(path.join(dir, 'test/sum.test.js')));
    expect(await gate.read(jestOutput)).toEqual({
      runner: 'jest',
      passed: 1,
      failed: 0,
      skipped: 0,
      passedTests: ['test/sum.test.js > sum > adds'],
      failedTests: [],
    });
  });

  it('falls back to the output when the runner wrote no report', async () => {
    const gate = await instrumentTestsGate(tests(['npm', 'test']), checkout({ test: 'jest' }), reportDir);
    expect(await gate.read(jestOutput)).toMatchObject({ runner: 'jest', passed: 2, passedTests: [] });
  });

  it('does not follow a report that is a symlink, or a report directory swapped for one', async () => {
    const dir = checkout({ test: 'jest' });
    const elsewhere = path.join(root, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(elsewhere, 'jest.json'), jestReport(path.join(dir, 'planted.test.js')));
    const gate = await instrumentTestsGate(tests(['npm', 'test']), dir, reportDir);
    fs.symlinkSync(path.join(elsewhere, 'jest.json'), path.join(reportDir, 'jest.json'));
    expect((await gate.read(jestOutput))?.passed).toBe(2);
    fs.rmSync(reportDir, { recursive: true });
    fs.symlinkSync(elsewhere, reportDir);
    expect((await gate.read(jestOutput))?.passed).toBe(2);
  });
});
