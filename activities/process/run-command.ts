// Runs one gate or agent command as a real subprocess and records what happened as evidence:
// always through the sandbox, no shell, cwd confined to the workspace, bounded in time and memory,
// and the whole process tree killed on timeout or cancellation. This is the only place untrusted
// work is started — from the launcher's helper process (launcher.ts); ESLint keeps child_process out
// of the other activity modules.
import { createHash, randomUUID, type Hash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { openSandboxEgress, type EgressRefusal } from '../sandbox/egress-proxy';
import { limitReached, type LimitReached } from '../sandbox/limits';
import type { Sandbox, SandboxPolicy } from '../sandbox/types';
import { watchGrowth, type GrowthWatch } from '../sandbox/workspace-meter';
import { findEscapingArgument } from './confine-paths';
import { launch } from './launcher';
import { inOrder } from '../in-order';

export interface CommandSpec {
  /** argv[0] is executed directly, never through a shell. */
  argv: string[];
  /** Absolute, or relative to workspaceRoot; must resolve (symlinks included) inside it. */
  cwd: string;
  workspaceRoot: string;
  timeoutMs: number;
  /** The child's environment; build it with childEnvironment() (the sandbox adds HOME, TMPDIR, toolchains). */
  env: Record<string, string>;
  /** Where and how the command is confined. */
  sandbox: { sandbox: Sandbox; policy: SandboxPolicy };
  stdin?: string;
  /** Per stream: the head is kept up to this size, the rest is only hashed and counted. */
  outputCapBytes: number;
  heartbeat?: () => void;
  heartbeatIntervalMs?: number;
  /** Aborting kills the process group; the result is CANCELLED. */
  signal?: AbortSignal;
  /** Refuse (as a spawnError, without running) path arguments that lead outside the workspace and the policy's writable dirs. */
  confinePathArguments?: boolean;
  /** Called once the child runs, with its pid (= its process group id). */
  onSpawn?: (pid: number) => void;
}

export type TimeoutStatus = 'COMPLETED' | 'TIMED_OUT' | 'CANCELLED';

export interface CommandResult {
  executionId: string;
  argv: string[];
  pid: number | null;
  startTime: Date;
  endTime: Date;
  /** null when the child was killed by a signal or never started. */
  exitCode: number | null;
  signal: string | null;
  timeoutStatus: TimeoutStatus;
  /** Capped heads of the streams, with a truncation marker when cut. */
  stdout: string;
  stderr: string;
  /** Hashes and sizes of the full streams, not just the kept heads. */
  stdoutSha256: string;
  stderrSha256: string;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
  /** Why the command could not start (e.g. not found); recorded, not thrown. */
  spawnError: string | null;
  /** Connections the egress proxy refused (a sandbox with network); empty otherwise. */
  egressRefused: EgressRefusal[];
  /**
   * Sandbox limits the command ran into (its own cgroup's counters, the workspace meter, SIGXFSZ, ENOSPC):
   * the environment's doing, reported as such, never as the code's (activities/verification/gate-outcome.ts).
   */
  limitsReached: LimitReached[];
}

export class WorkspaceEscapeError extends Error {
  override readonly name = 'WorkspaceEscapeError';

  constructor(
    readonly cwd: string,
    readonly workspaceRoot: string,
    reason: string,
  ) {
    super(`cwd ${cwd} is not usable inside workspace ${workspaceRoot}: ${reason}`);
  }
}

const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;
// Time the group gets to exit on SIGTERM before SIGKILL.
const KILL_GRACE_MS = 2_000;
// After the command exits, time for its output to drain before whatever still holds the pipes is killed.
const DRAIN_GRACE_MS = 1_000;
// A confined command that cannot be executed: the launcher inside the sandbox reports it and exits 127.
const NOT_FOUND_IN_SANDBOX =
  /^(?:setpriv|prlimit|bwrap|egress-bridge): (?:failed to execute|execvp) .*: No such file or directory$/m;
// The shell that puts the command into its cgroups (limits.ts enterArgv) could not.
const NOT_IN_CGROUP = /^sandbox: cannot enter cgroup .*$/m;

export async function runCommand(spec: CommandSpec): Promise<CommandResult> {
  if (spec.argv[0] === undefined) throw new Error('argv is empty: there is no command to run');
  const cwd = await confinedCwd(spec.cwd, spec.workspaceRoot);
  const { sandbox, policy } = spec.sandbox;
  const escaping = spec.confinePathArguments
    ? await findEscapingArgument(spec.argv, cwd, spec.workspaceRoot, policy.writable)
    : null;
  if (escaping) return refused(spec.argv, `refused: ${escaping}`);
  const limits = sandbox.limits;
  // Unconfined (SANDBOX=none) a command has the host's network; confined, only the proxy's allow-list.
  const egress = sandbox.mode === 'bwrap' && policy.egress ? await openSandboxEgress(policy.egress) : null;
  let result: Omit<CommandResult, 'egressRefused' | 'limitsReached'>;
  const reached: LimitReached[] = [];
  let lease: Awaited<ReturnType<Sandbox['lease']>> = null;
  let watch: GrowthWatch | null = null;
  // Set once the command runs: kills it when its writable trees grew past the limit.
  let grownTooMuch: ((grown: number) => void) | null = null;
  try {
    // The writable trees' growth is measured from before the command (workspace-meter.ts), while its
    // cgroups are made: neither waits for the other.
    const [watched, leased] = await Promise.allSettled([
      limits
        ? watchGrowth(writableTrees(policy), limits.values.workspaceBytes, limits.workspaceCheckMs, (grown) =>
            grownTooMuch?.(grown),
          )
        : null,
      sandbox.lease(),
    ]);
    // Both kept before either failure is thrown, so the catch below ends whichever did start.
    watch = watched.status === 'fulfilled' ? watched.value : null;
    lease = leased.status === 'fulfilled' ? leased.value : null;
    if (watched.status === 'rejected') throw watched.reason;
    if (leased.status === 'rejected') throw leased.reason;
    result = await runConfined(spec, cwd, egress?.socketPath, lease, (kill) => {
      grownTooMuch = (grown) => {
        reached.push(workspaceReached(limits!.values, grown, 'killed while it ran'));
        kill();
      };
    });
  } catch (err) {
    await egress?.close();
    await watch?.stop();
    await lease?.release({ exitCode: null, signal: null, stderr: '' });
    throw err;
  }
  // The last measurement and the cgroup's counters are read together: the command's processes are gone.
  const [grown, kernel] = await inOrder([
    watch ? watch.stop() : Promise.resolve(0),
    lease ? lease.release(result) : Promise.resolve([]),
  ]);
  if (limits && reached.length === 0 && grown > limits.values.workspaceBytes)
    reached.push(workspaceReached(limits.values, grown, 'measured after it ended'));
  return {
    ...result,
    egressRefused: (await egress?.close()) ?? [],
    limitsReached: [...kernel, ...reached],
  };
}

/** The trees a command may write that count against SANDBOX_MAX_WORKSPACE_BYTES (not shared caches). */
function writableTrees(policy: SandboxPolicy): string[] {
  return [policy.workDir, ...(policy.writable ?? [])];
}

function workspaceReached(values: NonNullable<Sandbox['limits']>['values'], grown: number, how: string): LimitReached {
  return limitReached('workspace', values, `the writable trees grew by ${grown} bytes, ${how}`);
}

async function runConfined(
  spec: CommandSpec,
  cwd: string,
  egressSocket: string | undefined,
  lease: Awaited<ReturnType<Sandbox['lease']>>,
  onKill: (kill: () => void) => void,
): Promise<Omit<CommandResult, 'egressRefused' | 'limitsReached'>> {
  const command = spec.argv[0] ?? '';
  const { sandbox, policy } = spec.sandbox;
  const [launcher, ...args] = sandbox.wrap(spec.argv, policy, cwd, egressSocket, lease ?? undefined) as [
    string,
    ...string[],
  ];

  const executionId = randomUUID();
  const startTime = new Date();
  const stdout = new CappedStream(spec.outputCapBytes);
  const stderr = new CappedStream(spec.outputCapBytes);
  let timeoutStatus: TimeoutStatus = 'COMPLETED';
  let killTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;

  // Started detached (launch does so): the child leads a new process group, so the whole tree can be
  // signalled at once.
  const child = await launch({
    command: launcher,
    args,
    cwd,
    env: sandbox.environment(spec.env, policy),
    stdin: spec.stdin ?? '',
    onStdout: (chunk) => stdout.write(chunk),
    onStderr: (chunk) => stderr.write(chunk),
  });
  const pid = child.pid;
  if (pid !== null) spec.onSpawn?.(pid);
  if (pid !== null) onKill(() => signalGroup(pid, 'SIGKILL'));
  const failedSpawn = child.spawnError;
  let spawnError =
    failedSpawn && (failedSpawn.code === 'ENOENT' ? `ENOENT: command not found: ${command}` : failedSpawn.message);

  const terminate = (status: TimeoutStatus) => {
    if (pid === null || timeoutStatus !== 'COMPLETED') return;
    timeoutStatus = status;
    signalGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
  };
  const onAbort = () => terminate('CANCELLED');
  const timeoutTimer = setTimeout(() => terminate('TIMED_OUT'), spec.timeoutMs);
  const heartbeatTimer =
    spec.heartbeat && setInterval(spec.heartbeat, spec.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS);
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  if (spec.signal?.aborted) onAbort();

  // A sandbox's processes all die with it; unconfined, a descendant may still hold the pipes (a
  // daemon, a `setsid` child). The step ends when the command does: stragglers are killed and the
  // pipes closed after a short drain.
  child.exited.then(
    () => {
      drainTimer = setTimeout(() => {
        if (pid !== null) signalGroup(pid, 'SIGKILL');
        child.closeOutput();
      }, DRAIN_GRACE_MS);
    },
    // The launcher died: `closed` fails too, and that is what the caller sees.
    () => undefined,
  );

  // `closed` waits for the exit and for every holder of the pipes, grandchildren included.
  const { code: exitCode, signal } = await child.closed.finally(() => {
    clearTimeout(timeoutTimer);
    clearTimeout(killTimer);
    clearTimeout(drainTimer);
    clearInterval(heartbeatTimer);
    spec.signal?.removeEventListener('abort', onAbort);
  });
  // Descendants that outlived the leader (ignored SIGTERM, or were left in the background) must not
  // keep running in the workspace.
  if (pid !== null) signalGroup(pid, 'SIGKILL');
  const out = stdout.finish();
  const err = stderr.finish();
  if (spawnError === null && exitCode === 127 && NOT_FOUND_IN_SANDBOX.test(err.text)) {
    spawnError = `ENOENT: command not found: ${command} (the sandbox shows only the system, toolchains, SANDBOX_READONLY_PATHS and the workspace)`;
  }
  const notInCgroup = exitCode === 125 ? NOT_IN_CGROUP.exec(err.text) : null;
  if (spawnError === null && notInCgroup) spawnError = `the sandbox's limits could not be applied: ${notInCgroup[0]}`;
  return {
    executionId,
    argv: spec.argv,
    pid,
    startTime,
    endTime: new Date(),
    // A command that never started has no exit code.
    exitCode: spawnError === null ? exitCode : null,
    signal,
    timeoutStatus,
    stdout: out.text,
    stderr: err.text,
    stdoutSha256: out.sha256,
    stderrSha256: err.sha256,
    stdoutBytes: out.bytes,
    stderrBytes: err.bytes,
    truncated: out.truncated || err.truncated,
    spawnError,
  };
}

function refused(argv: string[], reason: string): CommandResult {
  const now = new Date();
  const empty = createHash('sha256').digest('hex');
  return {
    executionId: randomUUID(),
    argv,
    pid: null,
    startTime: now,
    endTime: now,
    exitCode: null,
    signal: null,
    timeoutStatus: 'COMPLETED',
    stdout: '',
    stderr: '',
    stdoutSha256: empty,
    stderrSha256: empty,
    stdoutBytes: 0,
    stderrBytes: 0,
    truncated: false,
    spawnError: reason,
    egressRefused: [],
    limitsReached: [],
  };
}

// Resolves cwd with symlinks followed, so neither `..` nor a link pointing outside gets out.
async function confinedCwd(cwd: string, workspaceRoot: string): Promise<string> {
  const root = await realpathOrThrow(workspaceRoot, cwd, workspaceRoot);
  const resolved = await realpathOrThrow(path.resolve(root, cwd), cwd, workspaceRoot);
  const relative = path.relative(root, resolved);
  const inside =
    relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
  if (!inside) throw new WorkspaceEscapeError(cwd, workspaceRoot, `it resolves to ${resolved}`);
  return resolved;
}

// A path that cannot be resolved cannot be shown to be inside the workspace.
async function realpathOrThrow(target: string, cwd: string, workspaceRoot: string): Promise<string> {
  try {
    return await realpath(target);
  } catch (error) {
    const reason = `${target} cannot be resolved (${String(error)})`;
    throw new WorkspaceEscapeError(cwd, workspaceRoot, reason);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    // ESRCH: the group is already gone, which is the goal. EPERM: a member changed its
    // credentials and cannot be signalled; nothing more can be done, and throwing from a timer
    // would crash the worker.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH' && code !== 'EPERM') throw error;
  }
}

// Hashes and counts a whole stream while keeping only capBytes of it in memory: mostly the head, plus
// the last quarter of the cap as a rolling tail — runners print their summaries (test counts) at the end.
class CappedStream {
  private readonly hash: Hash = createHash('sha256');
  private readonly head: Buffer[] = [];
  private tail: Buffer[] = [];
  private headBytes = 0;
  private tailBytes = 0;
  private totalBytes = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(capBytes: number) {
    this.tailCap = Math.floor(capBytes / 4);
    this.headCap = capBytes - this.tailCap;
  }

  write(chunk: Buffer): void {
    this.hash.update(chunk);
    this.totalBytes += chunk.length;
    const room = this.headCap - this.headBytes;
    if (room > 0) {
      // Copy a partial chunk so the kept head does not pin the whole chunk's memory.
      const kept = chunk.length <= room ? chunk : Buffer.from(chunk.subarray(0, room));
      this.head.push(kept);
      this.headBytes += kept.length;
      chunk = chunk.subarray(kept.length);
    }
    if (chunk.length === 0 || this.tailCap === 0) return;
    this.tail.push(Buffer.from(chunk.subarray(Math.max(0, chunk.length - this.tailCap))));
    this.tailBytes += Math.min(chunk.length, this.tailCap);
    while (this.tailBytes - this.tail[0]!.length >= this.tailCap) this.tailBytes -= this.tail.shift()!.length;
  }

  finish(): { text: string; sha256: string; bytes: number; truncated: boolean } {
    const sha256 = this.hash.digest('hex');
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail).subarray(-this.tailCap || 0);
    const kept = head.length + (this.tailCap ? tail.length : 0);
    const omitted = this.totalBytes - kept;
    if (omitted === 0) {
      return { text: Buffer.concat([head, tail]).toString('utf8'), sha256, bytes: this.totalBytes, truncated: false };
    }
    // StringDecoder.write holds back a UTF-8 sequence cut at the cap instead of mangling it; the tail
    // skips continuation bytes (10xxxxxx) of a character that began before it.
    let tailStart = 0;
    while (tailStart < tail.length && (tail[tailStart]! & 0xc0) === 0x80) tailStart++;
    const text =
      new StringDecoder('utf8').write(head) +
      `\n[output truncated: kept the first ${head.length} and the last ${tail.length} of ${this.totalBytes} bytes, ` +
      `${omitted} bytes omitted]\n` +
      (this.tailCap ? tail.subarray(tailStart).toString('utf8') : '');
    return { text, sha256, bytes: this.totalBytes, truncated: true };
  }
}
