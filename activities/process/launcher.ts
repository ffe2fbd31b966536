import { spawn, type ChildProcess } from 'node:child_process';

// The service's processes (git, and every command in the sandbox) are started by a small helper process,
// not by the worker itself: fork+exec costs in proportion to the forking process's memory, with its event
// loop blocked meanwhile — measured 0.8 ms per spawn from a 43 MB process, 7 ms at 190 MB, 22 ms at
// 440 MB — and an iteration runs a few dozen short git commands. The helper, a bare Node process, spawns
// each command and passes its output back over IPC; pids are real, so callers signal process groups
// directly. If the worker dies, the helper kills what it started and exits.

export interface LaunchSpec {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the command's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  onStdout: (chunk: Buffer) => void;
  onStderr: (chunk: Buffer) => void;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Launched {
  /** Leader of its own process group (spawned detached); null when it never started. */
  pid: number | null;
  /** Why it never started (ENOENT: no such command or directory). */
  spawnError: NodeJS.ErrnoException | null;
  /** When the command itself exited. Rejects if the launcher died first (the command was killed). */
  exited: Promise<Exit>;
  /**
   * When its output pipes closed too (descendants may hold them): every output chunk has been delivered.
   * Rejects if the launcher died first: the command was killed, and its outcome is not its own.
   */
  closed: Promise<Exit>;
  /** Closes the output pipes whoever still holds them, so `closed` comes. */
  closeOutput(): void;
}

/** Starts a command detached (its own process group), from the helper process. */
export function launch(spec: LaunchSpec): Promise<Launched> {
  return helper().launch(spec);
}

/** Resolves once no command the helper started is still running (work an activity left behind as it failed). */
export function launcherDrained(): Promise<void> {
  return current?.drained() ?? Promise.resolve();
}

/** Ends the helper process, if one runs (a worker that drained): nothing of the worker outlives it. */
export async function stopLauncher(): Promise<void> {
  await current?.stop();
}

type HelperMessage =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'error'; id: number; code?: string; message: string }
  | { type: 'stdout' | 'stderr'; id: number; data: Uint8Array }
  | { type: 'exit' | 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

/** A launched command's handle before its `exited` and `closed` promises are attached. */
type Started = Omit<Launched, 'exited' | 'closed'>;

interface InFlight {
  spec: LaunchSpec;
  pid: number | null;
  started: (handle: Started) => void;
  exited: (exit: Exit) => void;
  closed: (exit: Exit) => void;
  lost: (error: Error) => void;
}

class LaunchHelper {
  private readonly process: ChildProcess;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;
  private gone = false;
  private readonly drainWaiters: Array<() => void> = [];

  constructor(onGone: () => void) {
    this.process = spawn(process.execPath, ['-e', `(${helperMain.toString()})()`], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.process.on('message', (message: HelperMessage) => this.receive(message));
    this.process.on('error', () => undefined);
    this.process.on('exit', () => {
      this.gone = true;
      onGone();
      // What it was running is no longer watched by anyone: stop it, and fail its callers (an activity
      // attempt fails and is retried) rather than pass the kill off as the command's own outcome.
      for (const [id, run] of this.inFlight) {
        if (run.pid === null) {
          // Never started: a spawn error, as one the helper reports (its caller awaits neither promise).
          this.finish(
            id,
            { code: null, signal: null },
            Object.assign(new Error('the process launcher exited'), { code: 'ELAUNCHER' }),
          );
          continue;
        }
        this.inFlight.delete(id);
        killGroup(run.pid);
        run.lost(new Error(`the process launcher exited while ${run.spec.command} ran (it was killed)`));
      }
      for (const resolve of this.drainWaiters.splice(0)) resolve();
    });
    this.idle();
  }

  launch(spec: LaunchSpec): Promise<Launched> {
    if (this.gone) return Promise.reject(new Error('the process launcher exited'));
    const id = this.nextId++;
    const exited = settled<Exit>();
    const closed = settled<Exit>();
    // Whoever awaits only `closed` must not leave `exited`'s rejection unhandled.
    exited.promise.catch(() => undefined);
    const launched = new Promise<Launched>((resolve) => {
      const started = (handle: Started) => resolve({ ...handle, exited: exited.promise, closed: closed.promise });
      const lost = (error: Error) => {
        exited.reject(error);
        closed.reject(error);
      };
      this.inFlight.set(id, { spec, pid: null, started, exited: exited.resolve, closed: closed.resolve, lost });
    });
    this.busy();
    // A plain copy of the environment: process.env itself cannot be cloned into a message.
    this.process.send({
      type: 'spawn',
      id,
      command: spec.command,
      args: spec.args,
      cwd: spec.cwd,
      env: { ...spec.env },
      stdin: spec.stdin,
    });
    return launched;
  }

  drained(): Promise<void> {
    if (this.gone || this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Disconnects the helper, which then kills what it still runs and exits; resolves once it has. */
  stop(): Promise<void> {
    if (this.gone) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    // Held until it has exited: a worker with nothing else left to do would otherwise exit first and
    // leave the helper unreaped (a zombie of whatever adopts it).
    this.process.ref();
    this.process.disconnect();
    return exited;
  }

  private receive(message: HelperMessage): void {
    const run = this.inFlight.get(message.id);
    if (!run) return;
    switch (message.type) {
      case 'spawned':
        run.pid = message.pid;
        run.started(this.handle(message.id, message.pid, null));
        return;
      case 'error':
        this.finish(
          message.id,
          { code: null, signal: null },
          Object.assign(new Error(message.message), { code: message.code }),
        );
        return;
      case 'stdout':
        run.spec.onStdout(Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength));
        return;
      case 'stderr':
        run.spec.onStderr(Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength));
        return;
      case 'exit':
        run.exited({ code: message.code, signal: message.signal });
        return;
      case 'close':
        this.finish(message.id, { code: message.code, signal: message.signal }, null);
    }
  }

  /** Ends a run: never started (spawnError), or closed. */
  private finish(id: number, exit: Exit, error: NodeJS.ErrnoException | null): void {
    const run = this.inFlight.get(id);
    if (!run) return;
    this.inFlight.delete(id);
    if (run.pid === null) run.started(this.handle(id, null, error));
    run.exited(exit);
    run.closed(exit);
    if (this.inFlight.size === 0) this.idle();
  }

  private handle(id: number, pid: number | null, spawnError: NodeJS.ErrnoException | null): Started {
    return {
      pid,
      spawnError,
      closeOutput: () => {
        if (!this.gone && this.inFlight.has(id)) this.process.send({ type: 'close-output', id });
      },
    };
  }

  // An idle helper must not keep the worker (or a test, or the CLI) alive.
  private idle(): void {
    this.process.unref();
    this.process.channel?.unref();
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  private busy(): void {
    this.process.ref();
    this.process.channel?.ref();
  }
}

let current: LaunchHelper | null = null;

function helper(): LaunchHelper {
  current ??= new LaunchHelper(() => {
    current = null;
  });
  return current;
}

/** A promise with its resolve and reject at hand. */
function settled<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** SIGKILL to a launched command's whole process group. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * The helper process's whole program, run with `node -e` (so it needs no compiled file of its own):
 * self-contained, it may use nothing from this module.
 */
function helperMain(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const childProcess = require('node:child_process') as typeof import('node:child_process');
  const children = new Map<number, import('node:child_process').ChildProcess>();
  const send = (message: object) => process.send?.(message);
  process.on(
    'message',
    (m: {
      type: string;
      id: number;
      command: string;
      args: string[];
      cwd: string;
      env: NodeJS.ProcessEnv;
      stdin?: string;
    }) => {
      if (m.type === 'close-output') {
        children.get(m.id)?.stdout?.destroy();
        children.get(m.id)?.stderr?.destroy();
        return;
      }
      const stdin = m.stdin === undefined ? 'ignore' : 'pipe';
      let child: import('node:child_process').ChildProcess;
      try {
        child = childProcess.spawn(m.command, m.args, {
          cwd: m.cwd,
          env: m.env,
          detached: true,
          stdio: [stdin, 'pipe', 'pipe'],
        });
      } catch (err) {
        send({ type: 'error', id: m.id, code: (err as NodeJS.ErrnoException).code, message: (err as Error).message });
        return;
      }
      child.on('error', (err: NodeJS.ErrnoException) => {
        if (child.pid === undefined) send({ type: 'error', id: m.id, code: err.code, message: err.message });
      });
      if (child.pid === undefined) return;
      children.set(m.id, child);
      send({ type: 'spawned', id: m.id, pid: child.pid });
      if (child.stdin) {
        // A command may exit without reading its input (EPIPE): its business.
        child.stdin.on('error', () => undefined);
        child.stdin.end(m.stdin);
      }
      child.stdout?.on('data', (data: Buffer) => send({ type: 'stdout', id: m.id, data }));
      child.stderr?.on('data', (data: Buffer) => send({ type: 'stderr', id: m.id, data }));
      child.on('exit', (code, signal) => send({ type: 'exit', id: m.id, code, signal }));
      child.on('close', (code, signal) => {
        children.delete(m.id);
        send({ type: 'close', id: m.id, code, signal });
      });
    },
  );
  // The worker is gone: nothing it started may go on running unwatched.
  process.on('disconnect', () => {
    for (const child of children.values()) {
      try {
        process.kill(-(child.pid ?? 0), 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    process.exit(0);
  });
}
