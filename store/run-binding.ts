import type { PrismaClient } from './db';

// The loop's bound workflow run (activities/run-binding.ts) and the record of a run that ended outside
// the service (api/run-ended-outside.ts).

/** Binds the loop to `runId` when no run is bound yet; answers the bound run (null: no such loop). */
export async function bindFirstRun(
  db: PrismaClient,
  workflowId: string,
  runId: string,
): Promise<{ currentRunId: string | null } | null> {
  await db.loop.updateMany({ where: { workflowId, currentRunId: null }, data: { currentRunId: runId } });
  return db.loop.findUnique({ where: { workflowId }, select: { currentRunId: true } });
}

/** Moves the binding to `runId` from `from` (or keeps it there); false when neither is bound. */
export async function moveRunBinding(db: PrismaClient, workflowId: string, from: string, runId: string) {
  const moved = await db.loop.updateMany({
    where: { workflowId, currentRunId: { in: [from, runId] } },
    data: { currentRunId: runId },
  });
  return moved.count === 1;
}

/** Ends the loop as TERMINATED unless its status moved on meanwhile. */
export function recordEndedOutside(
  db: PrismaClient,
  loop: { id: string; status: string },
  end: { at: Date; reason: string },
) {
  return db.loop.updateMany({
    where: { id: loop.id, status: loop.status },
    data: { status: 'TERMINATED', phase: 'DONE', finishedAt: end.at, failureReason: end.reason },
  });
}
