import fs from 'node:fs/promises';
import path from 'node:path';
import { jvmJUnitName, mergeReports, parseJUnitXml, type TestReport } from '../../analysis/test-reports';
import { readGateFile } from './read-test-report';

// Maven's surefire and failsafe and Gradle's test task write one JUnit XML report per test class, in each
// module's own build directory: `target/surefire-reports/TEST-*.xml`, `target/failsafe-reports/TEST-*.xml`,
// `build/test-results/<task>/TEST-*.xml`. A JVM tests gate runs as configured; its reports are read from
// the checkout afterwards, merged over every module. Reports already there before the run (committed by
// the maker, or left by set-up) are removed first: a report proves only the run that wrote it.

const JVM_BUILD_TOOLS = new Set(['mvn', 'mvnw', 'gradle', 'gradlew']);
/** Directories no module's build output sits in, and trees too large to walk for nothing. */
const NOT_MODULES = new Set(['.git', 'node_modules', 'src', '.gradle', '.mvn', '.venv']);
const MAX_MODULE_DEPTH = 6;
const REPORT_FILE = /^TEST-.+\.xml$/;

/** Whether a tests gate runs Maven or Gradle (after `env` assignments, if any). */
export function isJvmBuild(argv: readonly string[]): boolean {
  const words = argv[0] === 'env' ? argv.slice(1).filter((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) : argv;
  return JVM_BUILD_TOOLS.has(path.posix.basename(words[0] ?? ''));
}

/** The report directories the build tools write under `checkout`, found in every module. */
async function reportDirectories(checkout: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const child = path.join(dir, entry.name);
      if (entry.name === 'target') {
        found.push(path.join(child, 'surefire-reports'), path.join(child, 'failsafe-reports'));
      } else if (entry.name === 'build') {
        const results = path.join(child, 'test-results');
        const tasks = await fs.readdir(results, { withFileTypes: true }).catch(() => []);
        found.push(...tasks.filter((t) => t.isDirectory()).map((t) => path.join(results, t.name)));
      } else if (depth < MAX_MODULE_DEPTH && !NOT_MODULES.has(entry.name)) {
        await visit(child, depth + 1);
      }
    }
  };
  await visit(checkout, 0);
  return found;
}

async function reportFiles(checkout: string): Promise<string[]> {
  const files: string[] = [];
  for (const dir of await reportDirectories(checkout)) {
    const names = await fs.readdir(dir).catch(() => []);
    files.push(...names.filter((name) => REPORT_FILE.test(name)).map((name) => path.join(dir, name)));
  }
  return files.sort();
}

/** Removes every JVM test report in the checkout, before the gate runs. */
export async function removeJvmReports(checkout: string): Promise<void> {
  for (const file of await reportFiles(checkout)) await fs.rm(file, { force: true });
}

/** Every report the run wrote, merged; null when it wrote none (it failed to compile, say). */
export async function readJvmReports(checkout: string, runner: 'surefire' | 'gradle'): Promise<TestReport | null> {
  const root = await fs.realpath(checkout);
  const reports: TestReport[] = [];
  for (const file of await reportFiles(root)) {
    const text = await readGateFile(root, file);
    const report = text && parseJUnitXml(text, { runner, name: jvmJUnitName });
    if (report) reports.push(report);
  }
  return mergeReports(reports);
}
