import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { LoopPhase, LoopStatus } from '../domain/loop-state';
import { TERMINAL_STATUSES } from '../domain/loop-state';
import type { ActivityDeps } from './deps';

export interface ProgressInput {
  loopId: string;
  status: LoopStatus;
  phase: LoopPhase;
  roundIteration: number;
  lastVerdict: string | null;
  failureReason: string | null;
  /**
   * The move's number in its workflow run (1, 2, …), counted by the workflow: every attempt of the move's
   * write shares it, whatever activity carries it.
   */
  move: number;
}

/**
 * Mirrors the workflow's state into the read model the API serves, and records the transition as a
 * phase event of the loop's timeline (LoopEvent) in the same transaction.
 *
 * `eventKey` makes the event idempotent: by default the workflow run id and the move's number, which every
 * attempt of the write shares — a local activity retried after a backoff timer too, though it runs under a
 * new activity id. Outside an activity (unit tests, scripts) each call gets its own key unless the caller
 * names one.
 */
export async function recordProgress(deps: ActivityDeps, input: ProgressInput, eventKey: string | null = activityEventKey(input.move)): Promise<void> {
  // When the move happened: the phase's work may run beside this write, and its rows come after the move.
  const createdAt = new Date();
  const key = eventKey ?? `adhoc:${randomUUID()}`;
  const at = createdAt.toISOString();
  // A loop that ends cancelled or failed while a human was asked closes that question with it, so
  // inboxes never list a decision nobody can make any more.
  const closesEscalations = input.status === 'CANCELLED' || input.status === 'FAILED';
  const ends = TERMINAL_STATUSES.includes(input.status);
  // One statement, so one transaction and one round trip: every phase's path goes through this write,
  // and Prisma's query compiler costs about a millisecond per query (more in a worker that writes rarely).
  const moved = await deps.prisma.$queryRaw<Array<{ id: string }>>`
    WITH closed AS (
      UPDATE "Escalation" SET "status" = ${input.status} WHERE "loopId" = ${input.loopId} AND "status" = 'OPEN' AND ${closesEscalations}
    ), moved AS (
      UPDATE "Loop" SET
        "status" = ${input.status},
        "phase" = ${input.phase},
        "roundIteration" = ${input.roundIteration}::int,
        "lastVerdict" = ${input.lastVerdict}::text,
        "failureReason" = COALESCE(${input.failureReason || null}::text, "failureReason"),
        "finishedAt" = CASE WHEN ${ends} THEN ${at}::timestamptz AT TIME ZONE 'UTC' ELSE "finishedAt" END,
        "updatedAt" = ${at}::timestamptz AT TIME ZONE 'UTC'
      WHERE "id" = ${input.loopId}
      RETURNING "id"
    ), event AS (
      INSERT INTO "LoopEvent" ("id", "loopId", "key", "status", "phase", "roundIteration", "lastVerdict", "failureReason", "createdAt")
      SELECT ${randomUUID()}, "id", ${key}, ${input.status}, ${input.phase}, ${input.roundIteration}::int, ${input.lastVerdict}::text, ${input.failureReason}::text, ${at}::timestamptz AT TIME ZONE 'UTC'
      FROM moved
      ON CONFLICT ("key") DO NOTHING
    )
    SELECT "id" FROM moved`;
  if (moved.length === 0) throw new Error(`loop ${input.loopId} does not exist: its progress cannot be recorded`);
}

/** `<workflow run id>:move-<move>`; null outside an activity started by a workflow. */
export function activityEventKey(move: number): string | null {
  const info = currentActivityInfo();
  return info?.workflowExecution ? `${info.workflowExecution.runId}:move-${move}` : null;
}

function currentActivityInfo() {
  try {
    return Context.current().info;
  } catch {
    // Not inside an activity.
    return null;
  }
}
