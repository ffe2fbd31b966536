import type { ChangedPath } from '../../analysis/tamper/change-set';
import { acceptanceTestsFirst, type BaseInventory } from '../../analysis/verification/base-inventory';
import type { ResolvedGate, TestCounts } from '../../domain/gates';
import { withBaseVersions } from './frozen-tests';
import type { TestsGateRun, VerificationRunner } from './verification-runner';

// The base run (docs/design.md §3.4): once per loop, the tests gate runs on the base commit's tree, and
// its report becomes the loop's base inventory (analysis/verification/base-inventory.ts). A contract that
// names tests gets it before the first maker, in the maker's untouched workspace (acceptance-tests.ts);
// otherwise the first verification that gets to its gates runs it — every file the branch changed put
// back, on the checkpoint's set-up, before any gate of the maker's. Later verifications read its row back.

export const BASE_TESTS_GATE = 'tests:base';
/** Its evidence's place in an iteration's list: before the frozen and the maker's own run. */
export const BASE_TESTS_ORDER = -2;

/** The inventory as its evidence row holds it; null when the runner reported no counts. */
export function inventoryOf(row: {
  testCounts: unknown;
  passedTests: unknown;
  failedTests: unknown;
}): BaseInventory | null {
  const counts = row.testCounts as TestCounts | null;
  if (!counts) return null;
  const names = [...((row.passedTests as string[] | null) ?? []), ...((row.failedTests as string[] | null) ?? [])];
  return { names, ran: counts.passed + counts.failed, skipped: counts.skipped };
}

/**
 * The tests gate with the base versions of every path the branch changed (`changes`, base →
 * checkpoint) put back, but for `alreadyBase` (gate entrypoints, or parts of them, the checkout holds at
 * base already: restoreInCheckout's list);
 * the names the acceptance tests pick out come first, so the stored (capped) copy keeps them.
 */
export async function baseTestsRun(
  runner: VerificationRunner,
  checkout: string,
  commits: { base: string; checkpoint: string },
  configured: ResolvedGate,
  changes: { paths: ChangedPath[]; alreadyBase: string[]; acceptanceTests: string[] },
): Promise<TestsGateRun> {
  // `package.json#jest.testTimeout`: a file whose gate-read parts are at base is left as the checkout has it.
  const kept = new Set(changes.alreadyBase.map((restored) => restored.split('#')[0]));
  const whole = [
    ...new Set(changes.paths.flatMap((c) => [c.basePath, c.checkpointPath]).filter((p): p is string => p !== null)),
  ].filter((file) => !kept.has(file));
  const ran = await withBaseVersions(checkout, commits.base, commits.checkpoint, { whole, inline: [] }, () =>
    runner.runTests(configured, 'base-tests'),
  );
  if (!ran.report) return ran;
  const first = (names: string[]) => acceptanceTestsFirst(names, changes.acceptanceTests);
  return {
    ...ran,
    report: { ...ran.report, passedTests: first(ran.report.passedTests), failedTests: first(ran.report.failedTests) },
  };
}
