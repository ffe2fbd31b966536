import { Client } from 'pg';

// Which loops just had records committed, heard from PostgreSQL: the triggers of migration
// 20261208090000_loop_feed_notify send a loop's id on channel loop_feed when a transaction that wrote the
// loop or one of its timeline rows commits, followed by ` ended` when it wrote the loop's row with a terminal
// status (migration 20261209090000_loop_feed_ended). A loop's event streams wake on it instead of waiting for
// their next poll (api/loop-event-stream.ts). A notification missed while the connection is down costs only
// that wait: the streams poll all the same.

export const LOOP_FEED_CHANNEL = 'loop_feed';
/** How long after losing its connection the listener connects again. */
export const RECONNECT_MS = 1_000;

export interface LoopWrites {
  /**
   * Calls `onWrite` after each commit that wrote a record of `loopId` (`ended`: it wrote the loop's end);
   * returns the unsubscription.
   */
  subscribe(loopId: string, onWrite: (ended: boolean) => void): () => void;
  close(): Promise<void>;
}

/** One connection listening for the whole process, connected again after it breaks. */
export function listenForLoopWrites(databaseUrl: string, log: (line: string) => void): LoopWrites {
  const subscribers = new Map<string, Set<(ended: boolean) => void>>();
  let client: Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  let saidLost = false;

  const connect = async () => {
    retry = null;
    const c = new Client({ connectionString: databaseUrl });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (client === c) client = null;
      void c.end().catch(() => undefined);
      if (closed) return;
      // Said once per outage: the database being down is reported elsewhere (/readyz).
      if (!saidLost)
        log(`loop write notifications lost (${err?.message ?? 'connection ended'}); event streams poll meanwhile`);
      saidLost = true;
      retry = setTimeout(() => void connect(), RECONNECT_MS);
    };
    c.on('notification', (n) => {
      if (!n.payload) return;
      const [loopId, what] = n.payload.split(' ');
      for (const onWrite of subscribers.get(loopId!) ?? []) onWrite(what === 'ended');
    });
    c.on('error', onLost);
    c.on('end', () => onLost());
    try {
      await c.connect();
      await c.query(`LISTEN ${LOOP_FEED_CHANNEL}`);
    } catch (err) {
      return onLost(err as Error);
    }
    if (closed) return void c.end().catch(() => undefined);
    client = c;
    if (saidLost) log('loop write notifications back');
    saidLost = false;
  };
  void connect();

  return {
    subscribe(loopId, onWrite) {
      const set = subscribers.get(loopId) ?? new Set();
      set.add(onWrite);
      subscribers.set(loopId, set);
      return () => {
        set.delete(onWrite);
        if (set.size === 0 && subscribers.get(loopId) === set) subscribers.delete(loopId);
      };
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
