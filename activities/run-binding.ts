import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PrismaClient } from '../store/db';
import { bindFirstRun as bindFirst, moveRunBinding } from '../store/run-binding';

// A run cannot be forged (docs/threat-model.md, "Temporal"): whoever can reach Temporal can start a run
// under a loop's workflow id — after terminating the real one — with the stored input and a reviewer of
// its own. Only one run may act for a loop: its first run, then each run it continued as new into. The
// loop's row holds that run's id; every activity checks the run it was called from against it, so a run
// the loop did not create (a fresh start, a reset, a run under an id no loop has) does nothing: it runs
// no command, writes no record and delivers nothing.

/** The failure type a refused run's activities fail with (never retried). */
export const FORGED_RUN = 'FORGED_RUN';

type Activity = (...args: never[]) => Promise<unknown>;

/** The activities, each refusing to act for a run that is not the loop's own. */
export function boundToLoopRun<T extends Record<string, Activity>>(prisma: PrismaClient, activities: T): T {
  const bound = new Set<string>();
  const check = async () => {
    const { workflowId, runId } = callingRun();
    const key = `${workflowId}\u0000${runId}`;
    // A run id is never reused, so a run once found bound stays bound for as long as it acts.
    if (bound.has(key)) return;
    await bindFirstRun(prisma, workflowId, runId);
    bound.add(key);
  };
  const wrap =
    (activity: Activity): Activity =>
    async (...args) => {
      await check();
      return activity(...args);
    };
  return Object.fromEntries(Object.entries(activities).map(([name, activity]) => [name, wrap(activity)])) as T;
}

/**
 * Binds the loop to `runId` when no run is bound yet (its first run's first activity), then refuses
 * unless `runId` is the bound one.
 */
async function bindFirstRun(prisma: PrismaClient, workflowId: string, runId: string): Promise<void> {
  const loop = await bindFirst(prisma, workflowId, runId);
  if (!loop) throw refused(`no loop was submitted under workflow id ${workflowId}`);
  if (loop.currentRunId !== runId)
    throw refused(
      `run ${runId} of ${workflowId} is not the loop's own run (${loop.currentRunId}): it was started, or reset, outside the service`,
    );
}

/**
 * The first step of a run the loop continued as new into: it takes over from `continuedFrom`, the run
 * Temporal says it continues, which must be the bound one. A fresh start or a reset has no such claim.
 */
export async function claimContinuedRun(
  prisma: PrismaClient,
  input: { loopId: string; continuedFrom: string | null },
): Promise<void> {
  const { workflowId, runId } = callingRun();
  if (input.continuedFrom && (await moveRunBinding(prisma, workflowId, input.continuedFrom, runId))) return;
  // Not continued from the bound run: only the bound run itself (a retried claim) or a first run passes.
  await bindFirstRun(prisma, workflowId, runId);
}

function callingRun(): { workflowId: string; runId: string } {
  const run = Context.current().info.workflowExecution;
  if (!run) throw refused('an activity of the loop was called outside a workflow');
  return run;
}

function refused(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FORGED_RUN, message: `refused: ${message}`, nonRetryable: true });
}
