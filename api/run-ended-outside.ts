import type { Client } from '@temporalio/client';
import type { PrismaClient } from '../store/db';
import { recordEndedOutside } from '../store/run-binding';
import { TERMINAL_STATUSES, type LoopStatus } from '../domain/loop-state';
import { TEMPORAL_DEADLINE_MS } from './temporal-calls';

// A loop's row says RUNNING or AWAITING_DECISION while its workflow runs; the workflow records every end
// it reaches itself. A run terminated, reset or timed out from outside the service (the Temporal CLI or
// UI) records nothing, so the row would say RUNNING for ever. Reading such a loop asks Temporal about
// the loop's own run (activities/run-binding.ts) and, when it has ended, records the loop as TERMINATED,
// saying how and when. A run the loop continued as new into is its successor, not an end.

const ENDED_OUTSIDE = new Set(['TERMINATED', 'TIMED_OUT', 'FAILED', 'COMPLETED', 'CANCELLED']);

export async function recordRunEndedOutside(
  deps: { prisma: PrismaClient; temporal: Client },
  loop: { id: string; workflowId: string; currentRunId: string | null; status: string },
): Promise<void> {
  if (loop.status === 'QUEUED' || TERMINAL_STATUSES.includes(loop.status as LoopStatus)) return;
  const ended = await runEnd(deps.temporal, loop.workflowId, loop.currentRunId);
  if (!ended) return;
  await recordEndedOutside(deps.prisma, loop, {
    at: ended.at,
    reason: `the loop's workflow run ${ended.runId} ended ${ended.status} outside the service at ${ended.at.toISOString()} (Temporal CLI or UI); nothing was done for the loop after that`,
  });
}

/** How the loop's run ended, or null while it runs, continued as new, or Temporal cannot say now. */
async function runEnd(
  temporal: Client,
  workflowId: string,
  runId: string | null,
): Promise<{ runId: string; status: string; at: Date } | null> {
  try {
    const described = await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
      temporal.workflow.getHandle(workflowId, runId ?? undefined).describe(),
    );
    const status = described.status.name;
    if (!ENDED_OUTSIDE.has(status)) return null;
    return { runId: described.runId, status, at: described.closeTime ?? new Date() };
  } catch {
    // The loop's row still answers while Temporal is away; a run Temporal no longer knows is not an end it can date.
    return null;
  }
}
