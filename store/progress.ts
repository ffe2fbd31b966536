import { randomUUID } from 'node:crypto';
import type { LoopPhase, LoopStatus } from '../domain/loop-state';
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
}

/**
 * Moves the loop's read-model row and records the phase event; the ids of the loops moved (none for an
 * unknown loop). One statement, so one transaction and one round trip: every phase's path goes through
 * this write, and Prisma's query compiler costs about a millisecond per query (more in a worker that
 * writes rarely).
 */
export function moveLoop(db: PrismaClient, move: LoopMove): Promise<Array<{ id: string }>> {
  const { at } = move;
  return db.$queryRaw<Array<{ id: string }>>`
    WITH closed AS (
      UPDATE "Escalation" SET "status" = ${move.status} WHERE "loopId" = ${move.loopId} AND "status" = 'OPEN' AND ${move.closesEscalations}
    ), moved AS (
      UPDATE "Loop" SET
        "status" = ${move.status},
        "phase" = ${move.phase},
        "roundIteration" = ${move.roundIteration}::int,
        "lastVerdict" = ${move.lastVerdict}::text,
        "failureReason" = COALESCE(${move.failureReason || null}::text, "failureReason"),
        "finishedAt" = CASE WHEN ${move.ends} THEN ${at}::timestamptz AT TIME ZONE 'UTC' ELSE "finishedAt" END,
        "updatedAt" = ${at}::timestamptz AT TIME ZONE 'UTC'
      WHERE "id" = ${move.loopId}
      RETURNING "id"
    ), event AS (
      INSERT INTO "LoopEvent" ("id", "loopId", "key", "status", "phase", "roundIteration", "lastVerdict", "failureReason", "createdAt")
      SELECT ${randomUUID()}, "id", ${move.key}, ${move.status}, ${move.phase}, ${move.roundIteration}::int, ${move.lastVerdict}::text, ${move.failureReason}::text, ${at}::timestamptz AT TIME ZONE 'UTC'
      FROM moved
      ON CONFLICT ("key") DO NOTHING
    )
    SELECT "id" FROM moved`;
}
