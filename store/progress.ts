import { randomUUID } from 'node:crypto';
import { TERMINAL_STATUSES, type LoopPhase, type LoopStatus } from '../domain/loop-state';
import type { PrismaClient } from './db';

/** The workflow's state as the read model mirrors it. */
export interface LoopState {
  loopId: string;
  status: LoopStatus;
  phase: LoopPhase;
  roundIteration: number;
  lastVerdict: string | null;
  failureReason: string | null;
}

export interface LoopMove extends LoopState {
  /** The phase event's idempotency key. */
  key: string;
  /** When the move happened (the loop's updatedAt and the event's createdAt). */
  at: string;
  /** Cancelled or failed while a human was asked: the open escalations close with the loop. */
  closesEscalations: boolean;
  /** A terminal status: the loop's finishedAt is set. */
  ends: boolean;
  /**
   * The workflow run that made the move and the move's number in it (the workflow counts them); null
   * outside a workflow (scripts, tests), where only the end guard applies.
   */
  run: { runId: string; move: number } | null;
}

/**
 * Moves the loop's read-model row and records the phase event. One statement, so one transaction and
 * one round trip: every phase's path goes through this write, and Prisma's query compiler costs about a
 * millisecond per query (more in a worker that writes rarely).
 *
 * The row only moves forward, guarded in the statement itself (no read-then-write race): never out of a
 * terminal status, never back to a move its run already passed (a retried or late write of an earlier
 * move, such as a phase's entry written after the loop was cancelled), and never for a run other than
 * the loop's own (one it continued as new from). A move that is refused changes nothing and records no
 * event. A move ends any wait for an outage (store/loop-waiting.ts). Answers whether the loop exists.
 */
export async function moveLoop(db: PrismaClient, move: LoopMove): Promise<boolean> {
  const { at } = move;
  const runId = move.run?.runId ?? null;
  const number = move.run?.move ?? 0;
  const found = await db.$queryRaw<unknown[]>`
    WITH moved AS (
      UPDATE "Loop" SET
        "status" = ${move.status},
        "phase" = ${move.phase},
        "roundIteration" = ${move.roundIteration}::int,
        "lastVerdict" = ${move.lastVerdict}::text,
        "failureReason" = COALESCE(${move.failureReason || null}::text, "failureReason"),
        "finishedAt" = CASE WHEN ${move.ends} THEN ${at}::timestamptz AT TIME ZONE 'UTC' ELSE "finishedAt" END,
        "moveRunId" = COALESCE(${runId}::text, "moveRunId"),
        "move" = CASE WHEN ${runId}::text IS NULL THEN "move" ELSE ${number}::int END,
        "updatedAt" = ${at}::timestamptz AT TIME ZONE 'UTC',
        "waitingFor" = NULL,
        "waitingSince" = NULL
      WHERE "id" = ${move.loopId}
        AND "status" <> ALL (${[...TERMINAL_STATUSES]}::text[])
        AND (
          ${runId}::text IS NULL
          OR (("currentRunId" IS NULL OR "currentRunId" = ${runId}::text)
            AND ("moveRunId" IS DISTINCT FROM ${runId}::text OR "move" < ${number}::int))
        )
      RETURNING "id"
    ), closed AS (
      UPDATE "Escalation" SET "status" = ${move.status}
      WHERE "loopId" = ${move.loopId} AND "status" = 'OPEN' AND ${move.closesEscalations} AND EXISTS (SELECT 1 FROM moved)
    ), event AS (
      INSERT INTO "LoopEvent" ("id", "loopId", "key", "status", "phase", "roundIteration", "lastVerdict", "failureReason", "createdAt")
      SELECT ${randomUUID()}, "id", ${move.key}, ${move.status}, ${move.phase}, ${move.roundIteration}::int, ${move.lastVerdict}::text, ${move.failureReason}::text, ${at}::timestamptz AT TIME ZONE 'UTC'
      FROM moved
      ON CONFLICT ("key") DO NOTHING
    )
    SELECT 1 FROM "Loop" WHERE "id" = ${move.loopId}`;
  return found.length > 0;
}
