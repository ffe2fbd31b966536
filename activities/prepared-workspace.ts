import type { GatePlan } from '../domain/gates';
import type { ActivityDeps } from './deps';
import { preparedLoopColumns } from '../store/loops';
import { keptPerClient } from './kept-promises';

/** What the iteration activities need of their loop: set once by prepareWorkspace, never changed after. */
export interface PreparedLoop {
  workspacePath: string;
  baseCommit: string;
  repoUrl: string;
  gatePlan: GatePlan | null;
}

/**
 * The loop's prepared workspace. Its columns never change once written, so each worker keeps the last
 * PREPARED_LOOPS_KEPT it read, per database client: every activity of every iteration asks again, and
 * with the answer at hand they start their git work at once. Each caller gets its own copy.
 */
export async function preparedLoop(deps: ActivityDeps, loopId: string): Promise<PreparedLoop> {
  return structuredClone(await keptLoops(deps.prisma).get(loopId, () => readPreparedLoop(deps, loopId)));
}

export const PREPARED_LOOPS_KEPT = 1000;

const keptLoops = keptPerClient<PreparedLoop>(PREPARED_LOOPS_KEPT);

async function readPreparedLoop(deps: ActivityDeps, loopId: string): Promise<PreparedLoop> {
  const loop = await preparedLoopColumns(deps.prisma, loopId);
  // Not prepared yet: an error, and nothing kept.
  if (!loop.workspacePath || !loop.baseCommit) throw new Error(`loop ${loopId} has no prepared workspace`);
  return {
    workspacePath: loop.workspacePath,
    baseCommit: loop.baseCommit,
    repoUrl: loop.repoUrl,
    gatePlan: loop.gatePlan as unknown as GatePlan | null,
  };
}

/** A checkpoint given in an activity's input started work before the iteration's row was read: they must agree. */
export function assertGivenCheckpoint(loopId: string, sequence: number, given: string, stored: string | null): void {
  if (given !== stored)
    throw new Error(`iteration ${sequence} of loop ${loopId} has checkpoint ${stored}, not ${given}`);
}
