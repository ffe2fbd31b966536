import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { sanitiseTokens } from '../domain/sanitise';

// One Node child process of `npm start` (the API or a worker), kept running. Its output reaches ours line
// by line under its name. After it was once ready, an unexpected exit restarts it: loops are durable in
// Temporal and PostgreSQL, so a restart loses nothing. Before that, an exit is a failed start, reported
// to the caller: a child that cannot start (bad configuration, say) would only fail again.

export interface ChildSpec {
  name: string;
  /** The compiled entry point, run with this Node. */
  script: string;
  /** Node's own options, before the script (a heap limit). */
  nodeArgs?: string[];
  env: NodeJS.ProcessEnv;
  /** Ready once a line of its output contains this, or once `probe` answers true (polled). */
  ready: { line: string } | { probe: () => Promise<boolean> };
  /** An IPC channel, for `send` (the API hears the service's status through it: api/service-status.ts). */
  ipc?: boolean;
}

const POLL_MS = 100;
/** A child that dies this soon after its start waits longer before each next one (up to MAX_BACKOFF_MS). */
const QUICK_EXIT_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;
/** After the exit, how long its last output lines may take to arrive (a grandchild could hold the pipe). */
const OUTPUT_DRAIN_MS = 1_000;

export class SupervisedChild {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private exitStatus = '';
  private readyLineSeen = false;
  private everReady = false;
  private restarting = true;
  private restartTimer: NodeJS.Timeout | null = null;
  private quickExits = 0;
  private lastMessage: object | null = null;

  constructor(
    private readonly spec: ChildSpec,
    private readonly log: (line: string) => void,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** Starts it; resolves once it is ready, rejects if it exits before. */
  async start(): Promise<void> {
    const child = this.spawn();
    for (;;) {
      // Gone once its exit (or failed spawn) was handled; no restart comes before it was ever ready.
      if (this.child !== child) {
        throw new Error(`${this.name} exited (${this.exitStatus}) before it was ready`);
      }
      if (await this.isReady()) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    this.everReady = true;
  }

  /** From now on an exit is final (the service is stopping, and may be signalled as a whole). */
  stopRestarting(): void {
    this.restarting = false;
    if (this.restartTimer) clearTimeout(this.restartTimer);
  }

  /** Sends `message` over its IPC channel, now and to each later start of it (the latest one only). */
  send(message: object): void {
    this.lastMessage = message;
    this.deliver();
  }

  /** A restart waiting out its backoff happens now (what it kept failing on is back). */
  restartNow(): void {
    if (!this.restartTimer || !this.restarting) return;
    clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.quickExits = 0;
    this.log(`${this.name}: restarting now`);
    this.spawn();
  }

  /** SIGKILL now (the service's shutdown deadline passed). */
  kill(): void {
    this.stopRestarting();
    this.child?.kill('SIGKILL');
  }

  /** SIGTERM, then SIGKILL if it has not exited within `limitMs`; resolves once it is gone. */
  async stop(limitMs: number): Promise<void> {
    this.stopRestarting();
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), limitMs))),
    ]);
    clearTimeout(timer);
    if (!inTime) {
      this.log(`${this.name} did not stop within ${limitMs / 1000}s; killing it`);
      child.kill('SIGKILL');
      await this.exited;
    }
  }

  private async isReady(): Promise<boolean> {
    if ('line' in this.spec.ready) return this.readyLineSeen;
    return this.spec.ready.probe().catch(() => false);
  }

  private spawn(): ChildProcess {
    const child = spawn(process.execPath, [...(this.spec.nodeArgs ?? []), this.spec.script], {
      env: this.spec.env,
      stdio: this.spec.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    });
    const startedAt = Date.now();
    this.child = child;
    this.readyLineSeen = false;
    this.forward(child.stdout!, process.stdout);
    this.forward(child.stderr!, process.stderr);
    const exited = new Promise<void>((resolve) => {
      const exit = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitStatus = `code ${code} / signal ${signal}`;
        const drained = setTimeout(resolve, OUTPUT_DRAIN_MS);
        child.once('close', () => {
          clearTimeout(drained);
          resolve();
        });
      };
      child.once('exit', exit);
      // Not spawned at all (no 'exit' follows then).
      child.once('error', (err) => {
        this.log(`${this.name}: ${err.message}`);
        if (child.pid === undefined) exit(null, null);
      });
    });
    this.exited = exited;
    void exited.then(() => this.onExit(child, startedAt));
    this.deliver();
    return child;
  }

  private deliver(): void {
    const child = this.child;
    if (!this.lastMessage || !child?.connected) return;
    // A child that exits meanwhile gets it at its next start; the error says only that.
    child.send(this.lastMessage, () => undefined);
  }

  private onExit(child: ChildProcess, startedAt: number): void {
    if (this.child === child) this.child = null;
    // Before it was ever ready, start() reports the exit; while stopping, it was asked for.
    if (!this.everReady || !this.restarting) return;
    this.quickExits = Date.now() - startedAt < QUICK_EXIT_MS ? this.quickExits + 1 : 0;
    const delayMs = Math.min(1000 * 2 ** Math.max(0, this.quickExits - 1), MAX_BACKOFF_MS);
    this.log(`${this.name} exited (${this.exitStatus}); restarting in ${delayMs / 1000}s`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.restarting) this.spawn();
    }, delayMs);
  }

  private forward(from: Readable, to: Writable): void {
    const prefix = `[${this.name}] `;
    readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => {
      if ('line' in this.spec.ready && line.includes(this.spec.ready.line)) this.readyLineSeen = true;
      // The children redact their own output; this catches what one prints unredacted (a stray error).
      to.write(`${prefix}${sanitiseTokens(line)}\n`);
    });
  }
}
