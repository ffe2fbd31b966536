import { TERMINAL_STATUSES, type LoopStatus } from '../domain/loop-state';
import type { PrismaClient } from '../store/db';
import { feedSnapshot, type FeedSource } from '../store/loop-feed';
import type { DueRows } from '../store/read-model';
import { timelineEvents } from './loop-timeline';
import type { TimelineEvent } from './timeline-schemas';

// What a loop's live event stream sends next: the timeline events of the rows written since the reader's
// position, in the order their transactions ended (store/loop-feed.ts explains the positions).

/** Where a reader starts that has seen nothing: before every transaction id, frozen rows' 0 included. */
export const FEED_START = -1;

export interface FeedEvent {
  event: TimelineEvent;
  /** The transaction that wrote the event's row: its position in the stream. */
  xid: number;
}

export interface FeedBatch {
  /** In stream order: by transaction, and in time order within one. */
  events: FeedEvent[];
  /** The reader has every row at or below this position once it has these events. */
  position: number;
  /** Every transaction below it has ended; no reader can be at or past it. */
  horizon: number;
  loop: { status: string; phase: string };
  /** The loop has ended and every row it has is in this batch or an earlier one: nothing more will come. */
  finished: boolean;
  /** Rows were written that wait for an older transaction to end: served at a poll soon after. */
  held: boolean;
}

/** `<table>:<id>` sources grouped by table. */
function dueRows(sources: Iterable<string>): DueRows {
  const rows = new Map<FeedSource, string[]>();
  for (const source of sources) {
    const at = source.indexOf(':');
    const table = source.slice(0, at) as FeedSource;
    const ids = rows.get(table) ?? [];
    ids.push(source.slice(at + 1));
    rows.set(table, ids);
  }
  return rows;
}

/** The events after `position` that can be served now; null when there is no such loop. */
export async function nextBatch(prisma: PrismaClient, loopId: string, position: number): Promise<FeedBatch | null> {
  const { horizon, loop, rows } = await feedSnapshot(prisma, loopId);
  if (!loop) return null;
  const due = new Map(rows.filter((r) => r.xid > position && r.xid < horizon).map((r) => [r.source, r.xid]));
  // Written by a transaction that ended after one still running began: served once that one ends too.
  const waiting = rows.some((r) => r.xid >= horizon);
  const events: FeedEvent[] = [];
  if (due.size) {
    // Only the tables and rows due are read: most batches are a row or two of a long timeline.
    const only = due.size < rows.length ? dueRows(due.keys()) : undefined;
    for (const { source, event } of await timelineEvents(prisma, loopId, only)) {
      const xid = due.get(source);
      if (xid !== undefined) events.push({ event, xid });
    }
    // Stable: events of one transaction keep the timeline's time order.
    events.sort((a, b) => a.xid - b.xid);
  }
  return {
    events,
    position: Math.max(position, horizon - 1),
    horizon,
    loop,
    finished: TERMINAL_STATUSES.includes(loop.status as LoopStatus) && !waiting,
    held: waiting,
  };
}
