import fs from 'node:fs/promises';
import path from 'node:path';
import {
  mergeReports,
  nodeTestJUnitName,
  parseJestJsonFile,
  parseJUnitXml,
  parseMochaReportFile,
  pytestJUnitName,
  vitestJUnitName,
  type JUnitTestcase,
  type TestReport,
} from '../../analysis/test-reports';
import { readGateFile } from './read-test-report';
import { MOCHA_REPORTER, NODE_PRELOAD, PYTHON_SITECUSTOMIZE } from './report-preload-sources';

// Per-test reports from a tests gate whose command runs its runners through a composite script
// (`pnpm run test:nodejs && pnpm run test:edge`, `pnpm lint && vitest run`, run-p, concurrently, turbo,
// nx), where no flag can be added to the command line (test-reporter.ts). A module preloaded into every
// node process of the gate (NODE_OPTIONS=--require) adds the reporters when the process is jest, vitest,
// mocha or the `node --test` runner, and a sitecustomize on PYTHONPATH does it for pytest
// (report-preload-sources.ts); each invocation writes its own file to the report directory, and the
// files are merged afterwards. Other processes (package managers, the runners' workers) are left alone.

const PRELOAD_FILE = 'report-preload.cjs';

/** How each invocation's report is named, and read. */
const READINGS: Array<[RegExp, (text: string, checkout: string, under: string) => TestReport | null]> = [
  [/^jest-\d+-\d+\.json$/, (text, checkout) => parseJestJsonFile(text, checkout)],
  [
    /^vitest-\d+-\d+\.xml$/,
    (text, _checkout, under) => parseJUnitXml(text, { runner: 'vitest', name: vitestName(under) }),
  ],
  [/^mocha-\d+-\d+\.json$/, (text, checkout) => parseMochaReportFile(text, checkout)],
  [/^node-test-\d+-\d+\.xml$/, (text) => parseJUnitXml(text, { runner: 'node:test', name: nodeTestJUnitName })],
  [/^pytest-\d+-\d+\.xml$/, (text) => parseJUnitXml(text, { runner: 'pytest', name: pytestJUnitName })],
];

/**
 * Writes the preloaded files into `dir` (the run's report directory); returns the gate's variables for
 * them. Task runners that cache test results (turbo, nx) run every task: a result replayed from a cache
 * ran nothing now, and a cache can come with the change.
 */
export async function reportPreload(dir: string): Promise<Record<string, string>> {
  const preload = path.join(dir, PRELOAD_FILE);
  const python = path.join(dir, 'python');
  await fs.mkdir(python, { recursive: true });
  await fs.writeFile(preload, NODE_PRELOAD, { mode: 0o444 });
  await fs.writeFile(path.join(dir, 'mocha-reporter.cjs'), MOCHA_REPORTER, { mode: 0o444 });
  await fs.writeFile(path.join(python, 'sitecustomize.py'), PYTHON_SITECUSTOMIZE, { mode: 0o444 });
  return {
    NODE_OPTIONS: `--require ${JSON.stringify(preload)}`,
    PYTHONPATH: python,
    TURBO_FORCE: 'true',
    NX_SKIP_NX_CACHE: 'true',
  };
}

/** Every report the preloaded runners wrote to `dir`, merged; null when none did. */
export async function preloadedReports(dir: string, checkout: string): Promise<TestReport | null> {
  const reports: TestReport[] = [];
  for (const name of (await fs.readdir(dir)).sort()) {
    const read = READINGS.find(([pattern]) => pattern.test(name))?.[1];
    const text = read && (await readGateFile(dir, path.join(dir, name)));
    const report = text && read(text, checkout, await runDir(dir, name, checkout));
    if (report) reports.push(report);
  }
  return mergeReports(reports);
}

/**
 * Where, under the checkout, the runner that wrote report `name` ran (its `.cwd` beside the report, which
 * vitest's preload writes): '' at the root, `packages/a` in a workspace; '' when unknown or outside.
 */
async function runDir(dir: string, name: string, checkout: string): Promise<string> {
  const cwd = (await readGateFile(dir, path.join(dir, `${name}.cwd`)))?.trim();
  if (!cwd || !path.isAbsolute(cwd)) return '';
  const relative = path.relative(checkout, cwd);
  return relative.startsWith('..') || path.isAbsolute(relative) ? '' : relative.split(path.sep).join('/');
}

/** vitest's JUnit names, a test's file put under the directory vitest ran in, so names are the checkout's. */
function vitestName(under: string): (testcase: JUnitTestcase) => string {
  return (testcase) =>
    vitestJUnitName(
      under && testcase.classname ? { ...testcase, classname: `${under}/${testcase.classname}` } : testcase,
    );
}
