import { cachedReader, loadChanges } from './change-set';
import { early } from '../in-order';
import { baseGateEntrypoints } from './entrypoint-changes';
import { gateEntrypointChanged } from './gate-entrypoint-changed';
import { mockedModuleUnderTest } from './mocked-module-under-test';
import { outOfScopeChange } from './out-of-scope-change';
import { skipOrOnlyAdded } from './skip-or-only-added';
import { suppressionAdded } from './suppression-added';
import { inventoryReader } from './syntax-inventories';
import { testsDeleted } from './tests-deleted';
import { testsWeakened } from './tests-weakened';
import type { TamperCheck, TamperFinding, TamperInput } from './types';

export type { TamperFinding, TamperInput, TamperRule } from './types';

// docs/design.md §3.4: the system itself raises VALID BLOCKER findings when the maker games verification.
// Each rule compares the base commit with the maker's checkpoint commit using real git.

const RULES: TamperCheck[] = [
  gateEntrypointChanged,
  testsDeleted,
  testsWeakened,
  mockedModuleUnderTest,
  skipOrOnlyAdded,
  suppressionAdded,
  outOfScopeChange,
];

/**
 * Findings in rule order. Each title is stable for the same defect (one per file, or per weakened test
 * for TESTS_WEAKENED), so repeated tampering keeps its signature.
 */
export async function detectTampering(input: TamperInput): Promise<TamperFinding[]> {
  const read = cachedReader(input.workspace);
  // What the base's gates read does not depend on the change: read beside the diff (the gate entrypoint
  // rule then gets it from baseGateEntrypoints' cache, even while still being read).
  void early(baseGateEntrypoints(input.workspace, input.baseCommit, input.gates, read));
  const changes = await loadChanges(input.workspace, input.baseCommit, input.checkpointCommit);
  if (!changes.length) return [];
  const ctx = { input, changes, read, inventory: inventoryReader(input, changes, read) };
  const findings: TamperFinding[] = [];
  for (const rule of RULES) findings.push(...(await rule(ctx)));
  return findings;
}
