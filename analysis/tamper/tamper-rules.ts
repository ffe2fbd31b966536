import { danglingSymlink } from './dangling-symlink';
import { gateEntrypointChanged } from './gate-entrypoint-changed';
import { mockedModuleUnderTest } from './mocked-module-under-test';
import { outOfScopeChange } from './out-of-scope-change';
import { skipOrOnlyAdded } from './skip-or-only-added';
import { suppressionAdded } from './suppression-added';
import { testsDeleted } from './tests-deleted';
import { testsWeakened } from './tests-weakened';
import { specialCasedValues } from './special-cased-values';
import { testDataChanged } from './test-data-changed';
import { exitAtImport, testFrameworkInSource, testRunDetected } from './test-aware-source';
import type { TamperCheck, TamperContext, TamperFinding } from './types';

// docs/design.md §3.4: the system itself raises VALID BLOCKER findings when the maker games verification.
// Each rule compares the base commit with the maker's checkpoint commit, through the reads `ctx` offers.

const RULES: TamperCheck[] = [
  gateEntrypointChanged,
  testsDeleted,
  testsWeakened,
  mockedModuleUnderTest,
  skipOrOnlyAdded,
  suppressionAdded,
  outOfScopeChange,
  danglingSymlink,
  testDataChanged,
  testFrameworkInSource,
  testRunDetected,
  exitAtImport,
  specialCasedValues,
];

/**
 * Findings in rule order. Each title is stable for the same defect (one per file, or per weakened test
 * for TESTS_WEAKENED), so repeated tampering keeps its signature.
 */
export async function tamperFindings(ctx: TamperContext): Promise<TamperFinding[]> {
  const findings: TamperFinding[] = [];
  for (const rule of RULES) findings.push(...(await rule(ctx)));
  return findings;
}
