import fs from 'node:fs/promises';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';
import { readGateFile, readTestReport, removeStaleReport } from './read-test-report';
import { isJvmBuild, readJvmReports, removeJvmReports } from './jvm-test-reports';
import { preloadedReports, reportPreload } from './report-preload';
import { NODE_VALUE_FLAGS, runnerCommand, type RunnerCommand } from './test-runner-command';
import {
  nodeTestJUnitName,
  parseJestJsonFile,
  parseJUnitXml,
  parseTestCounts,
  pytestJUnitName,
  vitestJUnitName,
  type TestReport,
} from '../../analysis/test-reports';

// A tests gate run with a machine-readable report added, so every test's name and outcome is known
// however the runner prints (jest names no tests across several files) and the stored output's cap
// cannot cut it off. The report goes to a directory outside the checkout, made empty for this run, and
// is read from there only. The flags or variables added only choose reporters: what runs is unchanged.
// A gate that already chose its own report runs as it is and is read from its output; one whose runner
// is not recognised with certainty (test-runner-command.ts), a composite script say, gets the reporters
// through preloaded files instead (report-preload.ts: jest, vitest, mocha, node --test, pytest), else is
// read from its output.
// Maven and Gradle write a report per test class into the checkout whatever they are asked (jvm-test-reports.ts).

export interface InstrumentedTestsGate {
  argv: string[];
  env: Record<string, string>;
  /** reads this run's report (structured file first, else the output) */
  read(output: string): Promise<TestReport | null>;
}

interface Reporter {
  argv: string[] | null;
  env?: Record<string, string>;
  /** The file the runner writes in the report directory, and how to read it; none when the output is the report. */
  report?: { file: string; parse: (text: string) => TestReport | null };
}

export async function instrumentTestsGate(
  gate: ResolvedGate,
  checkout: string,
  reportDir: string,
): Promise<InstrumentedTestsGate> {
  if (gate.junitReport) {
    // A report file that exists before the run (committed by the maker, say) proves nothing about it.
    await removeStaleReport(checkout, gate.junitReport);
    return { argv: gate.argv, env: {}, read: (output) => readTestReport(gate, checkout, output) };
  }
  if (isJvmBuild(gate.argv)) {
    await removeJvmReports(checkout);
    const runner = gate.argv.some((word) => /gradlew?$/.test(word)) ? 'gradle' : 'surefire';
    return { argv: gate.argv, env: {}, read: async () => readJvmReports(checkout, runner) };
  }
  const fromOutput = { argv: gate.argv, env: {}, read: async (output: string) => parseTestCounts(output) };
  const command = await gateRunnerCommand(gate, checkout);
  const dir = await fs.realpath(reportDir);
  const root = await fs.realpath(checkout);
  if (!command) {
    // A composite script, or a command that starts its runner some other way: the runners report per invocation.
    return {
      argv: gate.argv,
      env: await reportPreload(dir),
      read: async (output) => (await preloadedReports(dir, root)) ?? parseTestCounts(output),
    };
  }
  const reporter = reporterFor(command, gate.argv, dir, root);
  if (!reporter?.argv) return fromOutput;
  const { report } = reporter;
  return {
    argv: reporter.argv,
    env: reporter.env ?? {},
    read: async (output) => {
      const text = report && (await readGateFile(dir, path.join(dir, report.file)));
      return (text && report?.parse(text)) || parseTestCounts(output);
    },
  };
}

/** The runner a tests gate runs, where arguments for it can go; null when that is not certain. */
export async function gateRunnerCommand(gate: ResolvedGate, checkout: string): Promise<RunnerCommand | null> {
  return runnerCommand(gate.argv, await packageScripts(checkout, gate.argv));
}

function reporterFor(command: RunnerCommand, argv: string[], dir: string, checkout: string): Reporter | null {
  const { words } = command;
  switch (command.runner) {
    case 'jest': {
      // jest writes the results it would print with --json; its usual report stays on the output.
      if (hasFlag(words, '--outputFile', '--output-file')) return null;
      const json = hasFlag(words, '--json') ? [] : ['--json'];
      return {
        argv: command.withArgs([...json, `--outputFile=${path.join(dir, 'jest.json')}`]),
        report: { file: 'jest.json', parse: (text) => parseJestJsonFile(text, checkout) },
      };
    }
    case 'vitest': {
      // Reporters named on the command line replace the configured ones, so the default one is named
      // too unless the command names its own.
      if (hasFlag(words, '--outputFile', '--output-file')) return null;
      const shown = hasFlag(words, '--reporter') ? [] : ['--reporter=default'];
      return {
        argv: command.withArgs([...shown, '--reporter=junit', `--outputFile.junit=${path.join(dir, 'junit.xml')}`]),
        report: {
          file: 'junit.xml',
          parse: (text) => parseJUnitXml(text, { runner: 'vitest', name: vitestJUnitName }),
        },
      };
    }
    case 'node:test': {
      // Reporters and destinations pair up in order; the spec reporter keeps the output readable.
      if (hasFlag(words, '--test-reporter', '--test-reporter-destination') || !nodeHasJUnitReporter()) return null;
      const flags = [
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        '--test-reporter=junit',
        `--test-reporter-destination=${path.join(dir, 'junit.xml')}`,
      ];
      // After --test and the flags that follow it (a name filter, say), before any file.
      let index = words.indexOf('--test') + 1;
      while (index < words.length && words[index]!.startsWith('-'))
        index += NODE_VALUE_FLAGS.has(words[index]!) ? 2 : 1;
      return {
        argv: command.withArgs(flags, index),
        report: {
          file: 'junit.xml',
          parse: (text) => parseJUnitXml(text, { runner: 'node:test', name: nodeTestJUnitName }),
        },
      };
    }
    case 'pytest': {
      // PYTEST_ADDOPTS reaches pytest however it is started; xunit1 names each testcase's file.
      if (
        command.assigned.includes('PYTEST_ADDOPTS') ||
        hasFlag(words, '--junitxml', '--junit-xml') ||
        words.includes('no:junitxml')
      )
        return null;
      const file = path.join(dir, 'junit.xml');
      return {
        argv,
        env: { PYTEST_ADDOPTS: `-rA --junitxml=${quoted(file)} -o junit_family=xunit1` },
        report: {
          file: 'junit.xml',
          parse: (text) => parseJUnitXml(text, { runner: 'pytest', name: pytestJUnitName }),
        },
      };
    }
    case 'go':
      // test2json events on the output name every test; arguments after -args go to the test binary.
      if (hasFlag(words, '-json', '--json')) return null;
      return { argv: command.withArgs(['-json'], words.includes('-args') ? 2 : undefined) };
  }
}

function hasFlag(words: string[], ...flags: string[]): boolean {
  return words.some((word) =>
    flags.some((flag) => word === flag || word.startsWith(`${flag}=`) || word.startsWith(`${flag}.`)),
  );
}

// A gate's node is taken to be the service's own (same host, same PATH); junit came with Node 20.8.
function nodeHasJUnitReporter(): boolean {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 20 || (major === 20 && minor >= 8);
}

/** The package.json scripts a package-manager gate may run (none for other gates). */
async function packageScripts(checkout: string, argv: string[]): Promise<Record<string, unknown>> {
  if (!argv.some((word) => ['npm', 'pnpm', 'yarn'].includes(path.posix.basename(word)))) return {};
  const root = await fs.realpath(checkout);
  const text = await readGateFile(root, path.join(root, 'package.json'));
  try {
    const scripts: unknown = text && (JSON.parse(text) as { scripts?: unknown }).scripts;
    return typeof scripts === 'object' && scripts !== null ? (scripts as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

// PYTEST_ADDOPTS is split like a shell command line.
function quoted(file: string): string {
  return `'${file.replace(/'/g, `'\\''`)}'`;
}
