import fs from 'node:fs/promises';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';
import { parseJUnitXml, parseTestCounts, type TestReport } from '../../analysis/test-reports';

const MAX_REPORT_BYTES = 20 * 1024 * 1024;

/**
 * The test report of a tests-gate run: from the JUnit XML file the gate declares (read only inside the
 * checkout; removeStaleReport ran first, so a file there now was written by this run), else from the
 * runner's own output.
 */
export async function readTestReport(gate: ResolvedGate, checkout: string, output: string): Promise<TestReport | null> {
  if (!gate.junitReport) return parseTestCounts(output);
  const file = await reportPath(checkout, gate.junitReport);
  const text = file && (await readGateFile(await fs.realpath(checkout), file));
  return text ? parseJUnitXml(text) : null;
}

/** Deletes whatever sits at the report path before the gate runs; its mtime proves nothing. */
export async function removeStaleReport(checkout: string, junitReport: string): Promise<void> {
  const file = await reportPath(checkout, junitReport);
  if (file) await fs.rm(file, { force: true, recursive: true });
}

/**
 * The text of a file a gate or the maker may have written (a report, package.json): only a regular
 * file (not a symlink) of at most MAX_REPORT_BYTES whose directory, symlinks resolved, is `root` (a
 * real path) or inside it; null for anything else.
 */
export async function readGateFile(root: string, file: string): Promise<string | null> {
  const dir = await fs.realpath(path.dirname(file)).catch(() => null);
  if (!dir || (dir !== root && !isInside(root, dir))) return null;
  const real = path.join(dir, path.basename(file));
  const stat = await fs.lstat(real).catch(() => null);
  if (!stat?.isFile() || stat.size > MAX_REPORT_BYTES) return null;
  return fs.readFile(real, 'utf8');
}

// The report's path with its directory resolved (symlinks included) inside the checkout; null if it leaves.
async function reportPath(checkout: string, junitReport: string): Promise<string | null> {
  const root = await fs.realpath(checkout);
  const target = path.resolve(root, junitReport);
  const dir = await fs.realpath(path.dirname(target)).catch(() => null);
  if (!dir) return null;
  const file = path.join(dir, path.basename(target));
  return isInside(root, file) ? file : null;
}

function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}
