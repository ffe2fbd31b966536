import path from 'node:path';
import type { SystemFinding } from '../tamper/types';
import type { TestReport } from '../test-reports';
import { escapeRegExp, testTitle } from './proven-criteria';

// What the frozen run (base test files restored on the maker's code) says about the maker's edits to
// tests: a test that fails there but not in the maker's own run was weakened to pass, and a run that
// executes fewer tests than the frozen one lost checks. Both hold whatever else the maker's run did —
// a maker whose own run fails elsewhere keeps the location of what it weakened. Pure, so every case is
// unit-tested.

export interface TestsRun {
  failureReason: string | null;
  report: TestReport | null;
  /** The tail of the run's output, quoted when the runner named no failed test. */
  outputTail: string;
}

const NAMES_QUOTED = 10;

/**
 * `files` are the base test files put back (base paths); `baseText` reads a file at base, to point
 * at the line that declares a failing test.
 */
export function frozenTestFindings(
  files: string[],
  maker: TestsRun,
  frozen: TestsRun,
  baseText: (file: string) => string | null,
): SystemFinding[] {
  if (files.length === 0) return [];
  const findings: SystemFinding[] = [];
  // A test that fails in the maker's own run too was not made to pass by the edit.
  const makerFailed = new Set(maker.report?.failedTests ?? []);
  const failed = (frozen.report?.failedTests ?? []).filter((name) => !makerFailed.has(name));
  // Without names, only a run that failed where the maker's passed says anything.
  if (frozen.failureReason && (failed.length > 0 || !maker.failureReason)) {
    const byFile = new Map<string, string[]>();
    for (const name of failed) {
      const file =
        files.find((f) => name.includes(f)) ??
        files.find((f) => declarationLine(baseText(f), name) !== null) ??
        files.find((f) => name.includes(path.posix.basename(f))) ??
        files[0]!;
      byFile.set(file, [...(byFile.get(file) ?? []), name]);
    }
    if (byFile.size === 0) byFile.set(files[0]!, []);
    for (const [file, names] of byFile) {
      const line = declarationLine(baseText(file), names[0]) ?? 1;
      findings.push({
        rule: 'TEST_WEAKENED',
        title: 'Test passes only in the maker’s edited version',
        topic: 'testing_gaps',
        location: { file, startLine: line, endLine: line },
        evidence: names.length
          ? `With the base version of ${file} restored, these tests fail against the maker's code (they passed with the maker's version):\n` +
            names
              .slice(0, NAMES_QUOTED)
              .map((n) => `- ${n}`)
              .join('\n') +
            (names.length > NAMES_QUOTED ? `\n… and ${names.length - NAMES_QUOTED} more` : '')
          : `With the base versions of ${files.join(', ')} restored, the tests gate fails (${frozen.failureReason}); the runner named no test. Output tail:\n${frozen.outputTail}`,
      });
    }
  }
  const ran = (r: TestReport | null) => (r ? r.passed + r.failed : null);
  const [makerRan, frozenRan] = [ran(maker.report), ran(frozen.report)];
  if (makerRan !== null && frozenRan !== null && makerRan < frozenRan) {
    findings.push({
      rule: 'FEWER_TESTS_RUN',
      title: 'Fewer tests ran than with the base test files',
      topic: 'testing_gaps',
      location: { file: files[0]!, startLine: 1, endLine: 1 },
      evidence:
        `${maker.report!.runner} ran ${makerRan} test(s) with the maker's test files (${maker.report!.skipped} skipped) ` +
        `and ${frozenRan} with the base versions of ${files.join(', ')} restored (${frozen.report!.skipped} skipped).`,
    });
  }
  return findings;
}

/** The base line that names the test (its title in quotes, or a `def`/`func`/`fn`), else null. */
export function declarationLine(text: string | null, name: string | undefined): number | null {
  if (!text || !name) return null;
  const title = testTitle(name);
  // A JVM method: `adds()` as JUnit 5 reports it, `adds(int)` for a parameterised run, `CalcTest#adds` or
  // `CalcTest.adds` as a contract may name it; a Kotlin method may be named in backticks.
  const plain = title.replace(/\(.*\)$/, '');
  const method = /(?:^|[#.])([A-Za-z_$][\w$]*)$/.exec(plain)?.[1] ?? plain;
  const lines = text.split('\n');
  const at = lines.findIndex(
    (line) =>
      line.includes(`'${title}'`) ||
      line.includes(`"${title}"`) ||
      line.includes(`\`${title}\``) ||
      line.includes(`\`${plain}\``) ||
      new RegExp(`\\b(?:def|func|fn|fun)\\s+${escapeRegExp(title)}\\b`).test(line) ||
      new RegExp(`\\b(?:void|fun)\\s+${escapeRegExp(method)}\\s*\\(`).test(line),
  );
  return at >= 0 ? at + 1 : null;
}
