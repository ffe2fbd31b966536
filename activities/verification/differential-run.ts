import type { ResolvedGate } from '../../domain/gates';
import { isRunnableSource } from '../../analysis/tamper/languages';
import type { Locate } from '../../analysis/verification/differential-findings';
import { declarationLine } from '../../analysis/verification/frozen-test-findings';
import { escapeRegExp, testTitle } from '../../analysis/verification/proven-criteria';
import { git } from '../git';
import { readAt } from '../tamper/change-set';
import type { RunnerCommand } from './test-runner-command';
import { isJvmBuild } from './jvm-test-reports';
import { gateRunnerCommand } from './test-reporter';
import type { TestsGateRun, VerificationRunner } from './verification-runner';

// The differential run (docs/design.md §3.4): after the tests gate passed, the acceptance tests run once
// more with the markers of a CI run removed — every gate runs with CI=true, so a test or code that
// behaves one way under CI would otherwise never be seen doing the other. The runner's own markers
// (JEST_WORKER_ID, NODE_TEST_CONTEXT, PYTEST_CURRENT_TEST) are set by the runner itself and cannot be
// altered; the source rules read for those. Only the acceptance tests run, where the runner takes a
// name filter; otherwise the whole gate does.

/** The variables the run leaves out. */
export const DIFFERENTIAL_UNSET = ['CI'];

export async function differentialRun(
  runner: VerificationRunner,
  configured: ResolvedGate,
  checkout: string,
  acceptanceTests: string[],
): Promise<TestsGateRun> {
  const command = await gateRunnerCommand(configured, checkout);
  const titles = acceptanceTests.map(title);
  const argv =
    (command ? acceptanceTestsOnly(command, titles) : jvmAcceptanceTestsOnly(configured.argv, titles)) ??
    configured.argv;
  return runner.runTests({ ...configured, argv }, 'tests-differential', DIFFERENTIAL_UNSET);
}

/** A test's own name: the last part of a qualified one (`file > describe > name`, `file::name`). */
function title(name: string): string {
  return name
    .split(/ > | › |::/)
    .pop()!
    .trim();
}

/**
 * A Maven or Gradle gate running only the acceptance tests' methods, or null: surefire's method filter
 * (`-Dtest=*#adds,*#subtracts`), Gradle's test filter after its test task (`test --tests *.adds`).
 */
export function jvmAcceptanceTestsOnly(argv: string[], titles: string[]): string[] | null {
  // `adds`, `adds(int)[1]`, `adds[1]`, or as a contract names it, `CalcTest#adds` or `CalcTest.adds`.
  const methods = titles.map((t) =>
    t
      .replace(/[([].*$/, '')
      .split(/[#.]/)
      .pop()!,
  );
  if (!isJvmBuild(argv) || !methods.length || !methods.every((m) => /^[\w$]+$/.test(m))) return null;
  if (argv.some((word) => /(?:^|\/)mvnw?$/.test(word))) {
    return [...argv, `-Dtest=${methods.map((m) => `*#${m}`).join(',')}`, '-Dsurefire.failIfNoSpecifiedTests=false'];
  }
  // A task option follows its task: the filter goes right after `test` (or `:module:test`).
  const task = argv.findIndex((word) => /^(?:[\w-]*:)*test$/.test(word));
  if (task < 0) return null;
  const filters = methods.flatMap((m) => ['--tests', `*.${m}`]);
  return [...argv.slice(0, task + 1), ...filters, ...argv.slice(task + 1)];
}

/** The gate's argv running only the tests named, or null when this runner's filter cannot say it. */
export function acceptanceTestsOnly(command: RunnerCommand, titles: string[]): string[] | null {
  if (!titles.length) return null;
  const alternatives = titles.map(escapeRegExp).join('|');
  switch (command.runner) {
    case 'jest':
    case 'vitest':
      return command.withArgs(['-t', `(?:${alternatives})`]);
    case 'node:test':
      return command.withArgs([`--test-name-pattern=(?:${alternatives})`], command.words.indexOf('--test') + 1);
    case 'pytest': {
      const names = titles.map((t) => t.replace(/\[.*\]$/, ''));
      return names.every((n) => /^\w+$/.test(n)) ? command.withArgs(['-k', names.join(' or ')]) : null;
    }
    case 'go': {
      // `example.com/shop/TestTotal/small` runs as -run TestTotal.
      const tops = titles.map((t) => t.split('/').find((part) => /^(?:Test|Example|Fuzz)/.test(part)) ?? t);
      if (!tops.every((t) => /^\w+$/.test(t))) return null;
      return command.withArgs(['-run', `^(?:${tops.join('|')})$`], 2);
    }
  }
}

/**
 * Where each of `names` (tests a gate reported) is declared at `commit`: the file the name
 * starts with (`test/a.test.js > …`, `tests/test_a.py::…`), else the test files that mention its title
 * (one `git grep`), at the line that declares it.
 */
export async function testLocator(workspace: string, commit: string, names: string[]): Promise<Locate> {
  const places = new Map<string, { file: string; line: number }>();
  for (const name of names) {
    // A JVM test's name starts with its class (`com.example.CalcTest > adds`), not its file.
    const file = /^(.+?\.\w+)(?: > | › |::)/.exec(name)?.[1];
    const candidates =
      file && isRunnableSource(file)
        ? [file]
        : await mentioning(workspace, commit, testTitle(name).replace(/\(.*\)$/, ''));
    for (const file of candidates) {
      const line = declarationLine(await readAt(workspace, commit, file), name);
      if (line !== null) {
        places.set(name, { file, line });
        break;
      }
    }
  }
  return (name) => places.get(name) ?? null;
}

async function mentioning(workspace: string, commit: string, text: string): Promise<string[]> {
  const listed = await git(workspace, ['grep', '-l', '-z', '-F', '-e', text, commit, '--']).catch(() => '');
  return listed
    .split('\0')
    .filter(Boolean)
    .map((hit) => hit.slice(commit.length + 1))
    .filter((file) => isRunnableSource(file));
}
