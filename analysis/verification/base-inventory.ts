import type { SystemFinding } from '../tamper/types';
import type { TestReport } from '../test-reports';
import type { Locate } from './differential-findings';
import { baseCandidates, namesTest } from './proven-criteria';

// The base inventory (docs/design.md §3.4): what the tests gate reported on the base commit's tree, run
// once per loop. An acceptance test's name is resolved against it: when it names one base test, only
// that test's result proves the criterion (a same-named test the maker adds elsewhere proves nothing);
// when it names several, the contract must say which. And no passing run of the maker's may run fewer
// tests than the base did. Pure, so every case is unit-tested.

export interface BaseInventory {
  /** The tests the base run reported, passed and failed, as stored (those an acceptance test names first). */
  names: string[];
  /** How many tests ran: passed and failed. */
  ran: number;
  skipped: number;
}

/** `names` with those an acceptance test names first, so a capped copy still holds them. */
export function acceptanceTestsFirst(names: string[], acceptanceTests: string[]): string[] {
  const named = (name: string) => acceptanceTests.some((wanted) => namesTest(name, wanted));
  return [...names.filter(named), ...names.filter((name) => !named(name))];
}

const NAMES_QUOTED = 10;

/**
 * ACCEPTANCE_TEST_AMBIGUOUS for each acceptance test naming several base tests, and FEWER_TESTS_RUN
 * when the maker's passing run ran fewer tests than the base run (`alsoFrozen`: the frozen run already
 * said so). `locate` finds a test's declaration at the base commit.
 */
export function baseInventoryFindings(
  acceptanceTests: string[],
  base: BaseInventory,
  maker: { failureReason: string | null; report: TestReport | null } | null,
  locate: Locate,
  alsoFrozen: boolean,
): SystemFinding[] {
  const findings: SystemFinding[] = [];
  for (const wanted of acceptanceTests) {
    const candidates = baseCandidates(wanted, base);
    if (candidates.length < 2) continue;
    const at = candidates.map(locate).find((place) => place !== null) ?? null;
    findings.push({
      rule: 'ACCEPTANCE_TEST_AMBIGUOUS',
      title: `The acceptance test "${wanted}" names ${candidates.length} tests of the base commit`,
      topic: 'testing_gaps',
      location: { file: at?.file ?? '.', startLine: at?.line ?? 1, endLine: at?.line ?? 1 },
      evidence:
        `No test proves it until the contract names one of them in full (amend the contract):\n` + quoted(candidates),
    });
  }
  const report = maker?.report;
  if (!alsoFrozen && maker && maker.failureReason === null && report && report.passed + report.failed < base.ran) {
    const ran = new Set([...report.passedTests, ...report.failedTests]);
    // A runner that names no test says only how many ran.
    const missing = ran.size ? base.names.filter((name) => !ran.has(name)) : [];
    const at = missing
      .slice(0, 2 * NAMES_QUOTED)
      .map(locate)
      .find((place) => place !== null);
    findings.push({
      rule: 'FEWER_TESTS_RUN',
      title: 'Fewer tests ran than on the base commit',
      topic: 'testing_gaps',
      location: { file: at?.file ?? '.', startLine: at?.line ?? 1, endLine: at?.line ?? 1 },
      evidence:
        `${report.runner} ran ${report.passed + report.failed} test(s) on the maker's change (${report.skipped} skipped) ` +
        `and ${base.ran} on the base commit (${base.skipped} skipped).` +
        (missing.length ? ` Reported on the base commit, not on the change:\n${quoted(missing)}` : ''),
    });
  }
  return findings;
}

function quoted(names: string[]): string {
  return (
    names
      .slice(0, NAMES_QUOTED)
      .map((name) => `- ${name}`)
      .join('\n') + (names.length > NAMES_QUOTED ? `\n… and ${names.length - NAMES_QUOTED} more` : '')
  );
}
