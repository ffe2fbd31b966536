import type { GatePlan } from '../domain/gates';
import type { ActivityDeps } from './deps';
import { loopBaseCommit, preparedLoopColumns } from '../store/loops';
import { keptPerClient } from './kept-promises';

/** What the iteration activities need of their loop, set by prepareWorkspace. */
export interface PreparedLoop {
  workspacePath: string;
  /** The commit the loop's change is measured against: its start, or the base it was replayed onto before delivery. */
  baseCommit: string;
  repoUrl: string;
  gatePlan: GatePlan | null;
}

type FixedColumns = Omit<PreparedLoop, 'baseCommit'>;

/**
 * The loop's prepared workspace. Its other columns never change once written, so each worker keeps the last
 * PREPARED_LOOPS_KEPT it read, per database client; the base is read each time (one primary-key read beside
 * them), because delivery moves it when it replays the change onto a base that moved (prepare-delivery.ts),
 * and any worker may run the next activity. Each caller gets its own copy.
 */
export async function preparedLoop(deps: ActivityDeps, loopId: string): Promise<PreparedLoop> {
  const [fixed, base] = await Promise.all([
    keptLoops(deps.prisma).get(loopId, () => readFixedColumns(deps, loopId)),
    loopBaseCommit(deps.prisma, loopId),
  ]);
  if (!base.baseCommit) throw new Error(`loop ${loopId} has no prepared workspace`);
  return { ...structuredClone(fixed), baseCommit: base.baseCommit };
}

export const PREPARED_LOOPS_KEPT = 1000;

const keptLoops = keptPerClient<FixedColumns>(PREPARED_LOOPS_KEPT);

async function readFixedColumns(deps: ActivityDeps, loopId: string): Promise<FixedColumns> {
  const loop = await preparedLoopColumns(deps.prisma, loopId);
  // Not prepared yet: an error, and nothing kept.
  if (!loop.workspacePath || !loop.baseCommit) throw new Error(`loop ${loopId} has no prepared workspace`);
  return {
    workspacePath: loop.workspacePath,
    repoUrl: loop.repoUrl,
    gatePlan: loop.gatePlan as unknown as GatePlan | null,
  };
}

/** A checkpoint given in an activity's input started work before the iteration's row was read: they must agree. */
export function assertGivenCheckpoint(loopId: string, sequence: number, given: string, stored: string | null): void {
  if (given !== stored)
    throw new Error(`iteration ${sequence} of loop ${loopId} has checkpoint ${stored}, not ${given}`);
}
