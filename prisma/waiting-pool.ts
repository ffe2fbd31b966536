import pg from 'pg';
import { isConnectFailure } from './connect-failures';

// A pg pool whose connections wait for an unreachable database instead of failing, for as long as
// the caller allows. Only opening a connection is retried: nothing of the query has been sent then,
// so trying again cannot apply it twice. A query that loses its connection midway still fails.

/** How a client waits for a database it cannot connect to (the worker's, inside activities). */
export interface ConnectWait {
  /**
   * Asked in the caller's context at each connection: null fails it now; otherwise it waits, trying
   * again with backoff, until `signal` aborts (the activity's cancellation) or `deadline` (ms since the
   * epoch) passes.
   */
  until(): { signal: AbortSignal; deadline: number } | null;
  /** Told when connecting starts failing, and when it works again after that. */
  onUnreachable(err: Error): void;
  onReachable(waitedMs: number): void;
}

const FIRST_DELAY_MS = 250;
/** Connecting costs the server almost nothing, so the wait between attempts stays short: a restarted database is used within seconds. */
const MAX_DELAY_MS = 5_000;

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

export class WaitingPool extends pg.Pool {
  /** When connecting started failing; null while it works. */
  private unreachableSince: number | null = null;

  constructor(
    config: pg.PoolConfig,
    private readonly wait: ConnectWait,
  ) {
    super(config);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const connected = this.connectWaiting(this.wait.until());
    if (!callback) return connected;
    // pg-pool's own query() takes a connection through the callback form.
    connected.then(
      (client) => callback(undefined, client, (release?: unknown) => client.release(release as Error | undefined)),
      (err: Error) => callback(err, undefined, () => undefined),
    );
  }

  private async connectWaiting(until: ReturnType<ConnectWait['until']>): Promise<pg.PoolClient> {
    for (let delay = FIRST_DELAY_MS; ; delay = Math.min(delay * 2, MAX_DELAY_MS)) {
      try {
        const client = await super.connect();
        this.reachable();
        return client;
      } catch (err) {
        if (!until || !isConnectFailure(err)) throw err;
        this.unreachable(err as Error);
        const left = until.deadline - Date.now();
        if (left <= 0 || !(await pause(Math.min(delay, left), until.signal))) throw err;
      }
    }
  }

  private unreachable(err: Error): void {
    if (this.unreachableSince !== null) return;
    this.unreachableSince = Date.now();
    this.wait.onUnreachable(err);
  }

  private reachable(): void {
    if (this.unreachableSince === null) return;
    const waited = Date.now() - this.unreachableSince;
    this.unreachableSince = null;
    this.wait.onReachable(waited);
  }
}

/** Waits `ms`; false when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (waited: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', aborted);
      resolve(waited);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', aborted, { once: true });
  });
}
