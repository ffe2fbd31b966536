import fs from 'node:fs/promises';
import path from 'node:path';
import {
  mergeReports,
  parseJestJsonFile,
  parseJUnitXml,
  vitestJUnitName,
  type JUnitTestcase,
  type TestReport,
} from '../../analysis/test-reports';
import { readGateFile } from './read-test-report';

// Per-test reports from a tests gate whose command runs its runners through a composite script
// (`pnpm run test:node && pnpm run test:edge`, `pnpm lint && vitest run`), where no flag can be added to
// the command line (test-reporter.ts). A module preloaded into every node process of the gate
// (NODE_OPTIONS=--require) adds the reporter flags when the process is jest's or vitest's command, each
// invocation writing its own file to the report directory; the reports are merged afterwards. Other
// node processes (package managers, the runners' workers) are left alone.

/** The variable naming the report directory to the preloaded module. */
const REPORT_DIR_VARIABLE = 'ENGINEERING_LOOP_TEST_REPORTS';
const PRELOAD_FILE = 'report-preload.cjs';
const JEST_REPORT = /^jest-\d+-\d+\.json$/;
const VITEST_REPORT = /^vitest-\d+-\d+\.xml$/;

// CommonJS, run by the gate's own node before the runner's code: it only reads process.argv and appends.
const PRELOAD_SOURCE = `'use strict';
(() => {
  const dir = process.env.${REPORT_DIR_VARIABLE};
  if (!dir || !process.argv[1]) return;
  const fs = require('node:fs');
  const path = require('node:path');
  let entry;
  try {
    entry = fs.realpathSync(process.argv[1]);
  } catch {
    return;
  }
  const args = process.argv.slice(2);
  const has = (...flags) => args.some((a) => flags.some((f) => a === f || a.startsWith(f + '=') || a.startsWith(f + '.')));
  const file = (runner, ext) => path.join(dir, runner + '-' + process.pid + '-' + Date.now() + ext);
  if (/[\\\\/]jest(?:-cli)?[\\\\/]bin[\\\\/]jest\\.js$/.test(entry)) {
    if (has('--outputFile', '--output-file', '--listTests', '--showConfig', '--watch', '--watchAll')) return;
    process.argv.push(...(has('--json') ? [] : ['--json']), '--outputFile=' + file('jest', '.json'));
  } else if (/[\\\\/]vitest[\\\\/]vitest\\.mjs$/.test(entry)) {
    if (has('--outputFile', '--output-file', '--watch') || ['watch', 'dev'].includes(args[0])) return;
    const report = file('vitest', '.xml');
    // vitest names a test's file relative to its root, by default the directory it runs in.
    try {
      if (!has('--root', '-r')) fs.writeFileSync(report + '.cwd', process.cwd());
    } catch {}
    process.argv.push(...(has('--reporter') ? [] : ['--reporter=default']), '--reporter=junit', '--outputFile.junit=' + report);
  }
})();
`;

/** Writes the preloaded module into `dir` (the run's report directory); returns the gate's variables for it. */
export async function reportPreload(dir: string): Promise<Record<string, string>> {
  const file = path.join(dir, PRELOAD_FILE);
  await fs.writeFile(file, PRELOAD_SOURCE, { mode: 0o444 });
  return { NODE_OPTIONS: `--require ${JSON.stringify(file)}`, [REPORT_DIR_VARIABLE]: dir };
}

/** Every report the preloaded runners wrote to `dir`, merged; null when none did. */
export async function preloadedReports(dir: string, checkout: string): Promise<TestReport | null> {
  const reports: TestReport[] = [];
  for (const name of (await fs.readdir(dir)).sort()) {
    const parse = JEST_REPORT.test(name)
      ? (text: string) => parseJestJsonFile(text, checkout)
      : VITEST_REPORT.test(name)
        ? vitestReading(await vitestDir(dir, name, checkout))
        : null;
    const text = parse && (await readGateFile(dir, path.join(dir, name)));
    const report = text && parse(text);
    if (report) reports.push(report);
  }
  return mergeReports(reports);
}

/**
 * Where, under the checkout, the vitest that wrote report `name` ran (its `.cwd` beside the report): ''
 * at the root, `packages/a` in a workspace; '' when unknown or outside the checkout.
 */
async function vitestDir(dir: string, name: string, checkout: string): Promise<string> {
  const cwd = (await readGateFile(dir, path.join(dir, `${name}.cwd`)))?.trim();
  if (!cwd || !path.isAbsolute(cwd)) return '';
  const relative = path.relative(checkout, cwd);
  return relative.startsWith('..') || path.isAbsolute(relative) ? '' : relative.split(path.sep).join('/');
}

/** vitest's JUnit report, a test's file put under the directory vitest ran in, so names are the checkout's. */
function vitestReading(under: string): (text: string) => TestReport | null {
  const name = (testcase: JUnitTestcase) =>
    vitestJUnitName(
      under && testcase.classname ? { ...testcase, classname: `${under}/${testcase.classname}` } : testcase,
    );
  return (text) => parseJUnitXml(text, { runner: 'vitest', name });
}
