import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { PrismaClient } from '../store/db';
import { ApiError } from './errors';
import { nextBatch, type FeedBatch, type FeedEvent } from './loop-event-feed';
import { sanitisedAnswer } from './sanitise-output';

// GET /v1/loops/:id/events as server-sent events: every timeline event of the loop once its transaction
// has ended, then new ones as they are written, until the loop has ended and all of it was sent. Each
// stream reads the database on its own: once a burst of commits of its loop is over (store/loop-writes.ts),
// at once when the loop's end was committed, and every poll interval anyway; they are few (a cap per API
// key) and each read is one small query.

export const STREAM_LIMITS = {
  /** How often an open stream looks for new rows when no commit of its loop woke it. */
  pollMs: 500,
  /** How soon it looks again when rows of its loop wait for an older transaction (any loop's) to end. */
  heldPollMs: 50,
  /**
   * How long after a commit of its loop a stream waits for the next before it reads. A loop commits in bursts
   * (an iteration's records, a phase's moves, tens of ms apart): one read after a burst instead of one per
   * commit, and none while the loop's own next step is starting (docs/performance.md).
   */
  burstMs: 100,
  /** A comment line this often, so proxies and clients know the connection is alive. */
  heartbeatMs: 15_000,
  /** Open streams per API key. */
  perKey: 10,
  /** What clients are told to wait before reconnecting (the `retry` field). */
  retryMs: 1_000,
};

/** The open streams of one API process: a cap per key, and an end for each when the server closes. */
export class EventStreams {
  private readonly openPerKey = new Map<string, number>();
  private readonly stops = new Set<() => void>();

  constructor(private readonly perKey = STREAM_LIMITS.perKey) {}

  /** Claims a stream for `keyId`; 429 when it has `perKey` open. Returns its release. */
  claim(keyId: string): () => void {
    const open = this.openPerKey.get(keyId) ?? 0;
    if (open >= this.perKey) {
      throw new ApiError(429, `at most ${this.perKey} event streams may be open per API key; close one first`, {
        'retry-after': '5',
      });
    }
    this.openPerKey.set(keyId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.openPerKey.get(keyId) ?? 1) - 1;
      if (left) this.openPerKey.set(keyId, left);
      else this.openPerKey.delete(keyId);
    };
  }

  /** Registers a stream's stop; returns its removal. */
  onClose(stop: () => void): () => void {
    this.stops.add(stop);
    return () => this.stops.delete(stop);
  }

  /** Ends every open stream (the server is closing): clients reconnect with their Last-Event-ID. */
  closeAll(): void {
    for (const stop of this.stops) stop();
  }
}

export interface StreamContext {
  prisma: PrismaClient;
  loopId: string;
  log: FastifyBaseLogger;
  /** Called at each heartbeat: notices a run that ended outside the service (api/run-ended-outside.ts). */
  onHeartbeat(): Promise<void>;
  /**
   * Calls `onWrite` after each commit that wrote a record of the loop (`ended`: the loop's end;
   * store/loop-writes.ts); returns its end.
   */
  subscribe?(onWrite: (ended: boolean) => void): () => void;
}

/**
 * Writes `first` and every later batch to `res` (hijacked from Fastify), until the loop has finished,
 * the client goes away or `streams` closes. Never throws: a failed poll ends the stream, and the client
 * resumes from its last event.
 */
export async function serveLoopEvents(
  res: ServerResponse,
  first: FeedBatch,
  ctx: StreamContext,
  streams: EventStreams,
): Promise<void> {
  let closed = false;
  // A burst of commits of the loop's records ended since the last read: the next read comes at once.
  let written = false;
  let wake: (() => void) | null = null;
  let burst: NodeJS.Timeout | undefined;
  const stop = () => {
    closed = true;
    wake?.();
  };
  res.on('close', stop);
  const removeStop = streams.onClose(stop);
  const burstOver = () => {
    written = true;
    wake?.();
  };
  const unsubscribe =
    ctx.subscribe?.((ended) => {
      clearTimeout(burst);
      if (ended) burstOver();
      else burst = setTimeout(burstOver, STREAM_LIMITS.burstMs);
    }) ?? (() => undefined);
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (written || closed) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx buffers responses unless told not to.
    'x-accel-buffering': 'no',
  });
  res.write(`retry: ${STREAM_LIMITS.retryMs}\n\n`);
  let batch: FeedBatch | null = first;
  let lastWrite = Date.now();
  try {
    while (batch && !closed) {
      if (batch.events.length) {
        res.write(eventFrames(batch.events));
        lastWrite = Date.now();
      }
      if (batch.finished) {
        res.write(`event: end\ndata: ${JSON.stringify({ loopId: ctx.loopId, ...batch.loop })}\n\n`);
        break;
      }
      await sleep(batch.held ? STREAM_LIMITS.heldPollMs : STREAM_LIMITS.pollMs);
      wake = null;
      if (closed) break;
      if (Date.now() - lastWrite >= STREAM_LIMITS.heartbeatMs) {
        res.write(': keep-alive\n\n');
        lastWrite = Date.now();
        await ctx.onHeartbeat();
      }
      // Cleared before the read: a commit during it wakes the next sleep.
      written = false;
      batch = await nextBatch(ctx.prisma, ctx.loopId, batch.position);
    }
  } catch (err) {
    ctx.log.warn({ err, loopId: ctx.loopId }, 'event stream ended early; the client resumes from its last event');
  } finally {
    clearTimeout(burst);
    unsubscribe();
    removeStop();
    res.off('close', stop);
    res.end();
  }
}

/**
 * One SSE event per timeline event. Only the last event of a transaction carries the `id` a client
 * resumes after: a connection cut inside a transaction's events gets that transaction again, never a gap.
 */
export function eventFrames(events: FeedEvent[]): string {
  return events
    .map(({ event, xid }, i) => {
      const last = events[i + 1]?.xid !== xid;
      return `${last ? `id: ${xid}\n` : ''}data: ${JSON.stringify(sanitisedAnswer(event))}\n\n`;
    })
    .join('');
}
