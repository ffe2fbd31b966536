import type { ActivityDeps } from './deps';
import { freezeContract, type FreezeContractInput } from './contract';
import { inPhase, type InPhase } from './progress';
import { prepareWorkspace, type PreparedWorkspace, type PrepareWorkspaceInput } from './workspace';

// A new loop's workspace, and then its first contract version frozen on entering CONTRACT, in one activity:
// the freeze needs nothing of the workflow's between the two, and as a local activity of its own it cost a
// workflow task about 30 ms (docs/performance.md). Loops started before 'freeze-in-prepare' freeze it apart.

export interface PrepareThenFreezeInput extends InPhase<PrepareWorkspaceInput> {
  /** Asked by the workflow: the version to freeze once the workspace is ready, under the move into CONTRACT. */
  freeze?: InPhase<FreezeContractInput>;
}

/** `frozen`: the version frozen, when asked to freeze one. */
export type PreparedAndFrozen = PreparedWorkspace & { frozen?: { version: number; hash: string } };

export async function prepareThenFreeze(
  deps: ActivityDeps,
  { freeze, ...input }: PrepareThenFreezeInput,
): Promise<PreparedAndFrozen> {
  // Both moves are settled in order: a move written after a later one is refused (store/progress.ts).
  const prepared = await inPhase(deps, input, () => prepareWorkspace(deps, input));
  if (!freeze) return prepared;
  return { ...prepared, frozen: await inPhase(deps, freeze, () => freezeContract(deps, freeze)) };
}
