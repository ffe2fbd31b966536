import type { SystemFinding } from '../tamper/types';
import type { TestReport } from '../test-reports';
import { namesTest } from './proven-criteria';

// The differential run (docs/design.md §3.4): the acceptance tests once more, with the markers of a CI
// run removed (`CI` unset). An acceptance test that passed in the gate but fails, or does not run at all,
// without them depends on being watched: code or a test that behaves one way under CI is a finding.
// Pure, so every case is unit-tested.

export interface DifferentialRun {
  report: TestReport | null;
  failureReason: string | null;
}

/** Where a test is declared: its file and line, or null when neither the name nor the tests say. */
export type Locate = (test: string) => { file: string; line: number } | null;

export function differentialFindings(
  acceptanceTests: string[],
  gate: TestReport,
  differential: DifferentialRun,
  locate: Locate,
): SystemFinding[] {
  // Without a report naming its tests the run says nothing about single tests.
  const named = differential.report && differential.report.passedTests.length + differential.report.failedTests.length;
  if (!differential.report || (!named && differential.report.passed > 0)) return [];
  const passedThere = differential.report.passedTests;
  const findings: SystemFinding[] = [];
  for (const wanted of acceptanceTests) {
    const proven = gate.passedTests.filter((name) => namesTest(name, wanted));
    const disagreeing = proven.filter((name) => !passedThere.includes(name));
    if (!disagreeing.length) continue;
    const name = disagreeing[0]!;
    const failed = differential.report.failedTests.includes(name);
    const at = locate(name) ?? { file: '(unknown)', line: 1 };
    findings.push({
      rule: 'PASSES_ONLY_UNDER_CI',
      title: `Acceptance test passes only with CI set: ${wanted}`.slice(0, 160),
      topic: 'testing_gaps',
      location: { file: at.file, startLine: at.line, endLine: at.line },
      evidence:
        `"${name}" passed in the tests gate (CI=true) but ${failed ? 'failed' : 'did not pass'} when the acceptance ` +
        `tests ran again with CI unset${differential.failureReason ? ` (${differential.failureReason})` : ''}.`,
    });
  }
  return findings;
}
