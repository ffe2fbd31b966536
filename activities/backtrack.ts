import type { ActivityDeps } from './deps';
import { recordBacktrack } from '../store/iterations';
import { loopById } from '../store/loops';
import { headCommit, resetTo } from './git';
import { handOver } from './sandbox/hand-over';

export interface BacktrackInput {
  loopId: string;
  /** The iteration that made things worse. */
  sequence: number;
  /** The checkpoint of the last iteration that was better. */
  toCommit: string;
}

/**
 * Resets the loop's branch to an earlier, better checkpoint (docs/design.md §8.2) and records it on the iteration
 * that was worse. Idempotent: resetting to the commit the branch is already at changes nothing.
 */
export async function backtrack(deps: ActivityDeps, input: BacktrackInput): Promise<void> {
  const loop = await loopById(deps.prisma, input.loopId);
  if ((await headCommit(loop.workspacePath!)) !== input.toCommit) {
    await resetTo(loop.workspacePath!, input.toCommit);
    await handOver(deps.sandbox, loop.workspacePath!);
  }
  await recordBacktrack(deps.prisma, input.loopId, input.sequence, input.toCommit);
}
