import type { DependencyState } from '../api/service-status';

// One embedded dependency of `npm start` (PostgreSQL, the Temporal dev server), kept running. When it dies,
// one line says so and it is started again the same way (same data directory, same port, so its data and
// the addresses the API and workers hold stay valid), after a wait that doubles with each failed attempt up
// to MAX_BACKOFF_MS. Its state (up, or restarting since when and after how many attempts) is what /readyz
// shows. The API and workers are not restarted for it: their clients reconnect by themselves.

/** A started instance: how it ends, and how to end it. */
export interface RunningDependency {
  /** Resolves, however it exits, with how it ended, e.g. "signal SIGKILL" or "code 1". */
  exited: Promise<string>;
  /** Stops it, bounded in time (it escalates to SIGKILL); at once if it has exited. */
  stop(): Promise<void>;
  /** SIGKILL now. */
  kill(): void;
}

/** The first wait; each failed attempt doubles it, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** A dependency that dies this soon after it came up keeps the backoff it had instead of starting over. */
const QUICK_EXIT_MS = 10_000;

export class SupervisedDependency<T extends RunningDependency = RunningDependency> {
  private current: RunningDependency | null = null;
  private restart: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly aborted = new AbortController();
  private upAt = 0;
  private downAt = 0;
  /** Deaths and failed attempts in a row: the next wait is FIRST_BACKOFF_MS · 2^(failures-1). */
  private failures = 0;
  private status: DependencyState;

  constructor(
    readonly name: string,
    /** Starts an instance; `signal` aborts a start under way (the service is stopping). */
    private readonly launch: (signal: AbortSignal) => Promise<T>,
    private readonly log: (line: string) => void,
    private readonly onChange: () => void = () => undefined,
  ) {
    this.status = { state: 'up', since: new Date().toISOString(), attempts: 0, restarts: 0, lastExit: null };
  }

  /** The first start; rejects if it fails (a dependency that never ran is a configuration problem). */
  async start(): Promise<T> {
    const running = await this.launch(this.aborted.signal);
    this.watch(running);
    return running;
  }

  state(): DependencyState {
    return { ...this.status };
  }

  /** Stops restarting it, cuts short a restart under way, and stops it. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.aborted.abort();
    await this.restart;
    await this.current?.stop();
    this.current = null;
    this.update({ state: 'stopped', since: new Date().toISOString() });
  }

  /** SIGKILL (the service's shutdown deadline passed). */
  kill(): void {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.aborted.abort();
    this.current?.kill();
  }

  private watch(running: RunningDependency, restarts = this.status.restarts): void {
    this.current = running;
    this.upAt = Date.now();
    this.update({ state: 'up', since: new Date(this.upAt).toISOString(), attempts: 0, restarts });
    void running.exited.then((how) => this.onExit(running, how));
  }

  private onExit(running: RunningDependency, how: string): void {
    if (this.current !== running || this.stopping) return;
    this.current = null;
    this.downAt = Date.now();
    if (this.downAt - this.upAt >= QUICK_EXIT_MS) this.failures = 0;
    this.failures += 1;
    this.update({ state: 'restarting', since: new Date(this.downAt).toISOString(), attempts: 0, lastExit: how });
    const delay = this.nextDelay();
    this.log(`${this.name} exited unexpectedly (${how}); restarting it in ${seconds(delay)}`);
    this.schedule(delay);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.restart = this.tryRestart().finally(() => (this.restart = null));
    }, delayMs);
  }

  private async tryRestart(): Promise<void> {
    if (this.stopping) return;
    const attempt = this.status.attempts + 1;
    this.update({ attempts: attempt });
    let running: RunningDependency;
    try {
      running = await this.launch(this.aborted.signal);
    } catch (err) {
      if (this.stopping) return;
      this.failures += 1;
      const delay = this.nextDelay();
      this.log(
        `${this.name} did not start again (attempt ${attempt}): ${firstLine(err)}; next attempt in ${seconds(delay)}`,
      );
      this.schedule(delay);
      return;
    }
    if (!this.stopping) {
      this.log(
        `${this.name} is running again (attempt ${attempt}, ${seconds(Date.now() - this.downAt)} after it died)`,
      );
    }
    this.watch(running, this.status.restarts + 1);
  }

  private nextDelay(): number {
    return Math.min(FIRST_BACKOFF_MS * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
  }

  private update(change: Partial<DependencyState>): void {
    this.status = { ...this.status, ...change };
    this.onChange();
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}

/** The first line of why a start failed: the full output (PostgreSQL's log, say) follows it in the message. */
function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!.slice(0, 500);
}
