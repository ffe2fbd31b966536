import fs from 'node:fs/promises';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';
import { parseJUnitXml, parseTestCounts, type TestReport } from './test-counts';

const MAX_REPORT_BYTES = 20 * 1024 * 1024;

/**
 * The test report of a tests-gate run: from the JUnit XML file the gate declares (read only inside the
 * workspace, and only if the run wrote it), else from the runner's own output.
 */
export async function readTestReport(gate: ResolvedGate, workspace: string, output: string, startedAt: Date): Promise<TestReport | null> {
  if (!gate.junitReport) return parseTestCounts(output);
  const root = await fs.realpath(workspace);
  const file = await fs.realpath(path.resolve(root, gate.junitReport)).catch(() => null);
  if (!file || path.relative(root, file).startsWith('..')) return null;
  const stat = await fs.stat(file);
  // A report left over from an earlier run proves nothing about this one.
  if (!stat.isFile() || stat.size > MAX_REPORT_BYTES || stat.mtime < startedAt) return null;
  return parseJUnitXml(await fs.readFile(file, 'utf8'));
}
