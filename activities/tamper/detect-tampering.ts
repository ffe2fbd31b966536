import { loadChanges, readAt } from './change-set';
import { gateEntrypointChanged } from './gate-entrypoint-changed';
import { outOfScopeChange } from './out-of-scope-change';
import { skipOrOnlyAdded } from './skip-or-only-added';
import { suppressionAdded } from './suppression-added';
import { testsDeleted } from './tests-deleted';
import { testsWeakened } from './tests-weakened';
import type { TamperCheck, TamperFinding, TamperInput } from './types';

export type { TamperFinding, TamperInput, TamperRule } from './types';

// SPEC §3.4: the system itself raises VALID BLOCKER findings when the maker games verification.
// Each rule compares the base commit with the maker's checkpoint commit using real git.

const RULES: TamperCheck[] = [
  gateEntrypointChanged,
  testsDeleted,
  testsWeakened,
  skipOrOnlyAdded,
  suppressionAdded,
  outOfScopeChange,
];

/** At most one finding per (rule, file), in rule order, so repeated tampering keeps its signature. */
export async function detectTampering(input: TamperInput): Promise<TamperFinding[]> {
  const changes = await loadChanges(input.workspace, input.baseCommit, input.checkpointCommit);
  if (!changes.length) return [];
  const ctx = { input, changes, read: (commit: string, file: string) => readAt(input.workspace, commit, file) };
  const findings: TamperFinding[] = [];
  for (const rule of RULES) findings.push(...(await rule(ctx)));
  return findings;
}
