import type { PrismaClient } from './db';

// Where a loop's timeline rows stand in commit order, for its live event stream (api/loop-event-feed.ts).
//
// Writers stamp rows with their own clocks, and a transaction that began first may commit last, so neither
// a time nor a sequence value tells a reader which rows it has seen. PostgreSQL's transaction ids do, read
// against a snapshot: every transaction below the snapshot's xmin (the horizon) has ended, so the set of
// rows written below it is final. A reader that has served every row below one horizon needs next only
// the rows from there up to the following horizon. A row's transaction is its xmin system column (an
// update gives the row a new one, so an updated row is served again, with its new content). age() turns
// that 32-bit id into the 64-bit one the horizon is, exactly, since both ages count from the same id
// within one statement.

/** The tables the timeline is made of (api/loop-timeline.ts), as its events name their source. */
export type FeedSource =
  | 'LoopEvent'
  | 'ContractVersion'
  | 'Evidence'
  | 'ExecutionRecord'
  | 'Verdict'
  | 'Escalation'
  | 'Decision'
  | 'LoopWaiting';

export interface FeedRow {
  /** `<table>:<id>`, as api/loop-timeline.ts names an event's row. */
  source: string;
  /** The transaction that last wrote the row. */
  xid: number;
}

export interface FeedSnapshot {
  /** Every transaction below it has ended. */
  horizon: number;
  /** The loop's state in the same snapshot; null when there is no such loop. */
  loop: { status: string; phase: string } | null;
  rows: FeedRow[];
}

/**
 * The loop's state, its timeline rows with their transaction ids, and the horizon, in one statement (one
 * snapshot). Ids fit a double: 64-bit transaction ids stay below 2^53 for tens of thousands of wraparounds.
 */
export async function feedSnapshot(db: PrismaClient, loopId: string): Promise<FeedSnapshot> {
  const rows = await db.$queryRaw<
    Array<{ horizon: string; status: string | null; phase: string | null; source: string | null; xid: string | null }>
  >`
    WITH snapshot AS (
      SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon
    ), feed AS (
      SELECT 'LoopEvent:' || "id" AS source, age(xmin) AS age FROM "LoopEvent" WHERE "loopId" = ${loopId}
      UNION ALL SELECT 'ContractVersion:' || "id", age(xmin) FROM "ContractVersion" WHERE "loopId" = ${loopId}
      UNION ALL SELECT 'Evidence:' || "id", age(xmin) FROM "Evidence" WHERE "loopId" = ${loopId}
      UNION ALL SELECT 'ExecutionRecord:' || "id", age(xmin) FROM "ExecutionRecord" WHERE "loopId" = ${loopId}
      UNION ALL SELECT 'Verdict:' || "id", age(xmin) FROM "Verdict" WHERE "loopId" = ${loopId}
      UNION ALL SELECT 'Escalation:' || "id", age(xmin) FROM "Escalation" WHERE "loopId" = ${loopId}
      UNION ALL SELECT 'Decision:' || "id", age(xmin) FROM "Decision" WHERE "loopId" = ${loopId}
      -- What the loop waits for (store/loop-waiting.ts): each attempt that meets the outage writes it again.
      UNION ALL SELECT 'LoopWaiting:' || "id", age(xmin) FROM "Loop" WHERE "id" = ${loopId} AND "waitingFor" IS NOT NULL
    )
    SELECT s.horizon::text AS horizon, l."status", l."phase", f.source,
      -- A frozen row's age is the largest there is: it counts as older than any reader.
      GREATEST(0, s.horizon::text::bigint - (f.age - age(s.horizon::xid)))::text AS xid
    FROM snapshot s
    LEFT JOIN "Loop" l ON l."id" = ${loopId}
    LEFT JOIN feed f ON l."id" IS NOT NULL`;
  const first = rows[0];
  if (!first) throw new Error('the feed query answered no row');
  return {
    horizon: Number(first.horizon),
    loop: first.status !== null && first.phase !== null ? { status: first.status, phase: first.phase } : null,
    rows: rows.flatMap((r) => (r.source !== null && r.xid !== null ? [{ source: r.source, xid: Number(r.xid) }] : [])),
  };
}
