import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  cgroupCandidates,
  instanceGroupName,
  instanceGroupPid,
  keyedCounter,
  limitsFromCounters,
  parseMountInfo,
  parseProcCgroup,
  type CgroupCounters,
  type LimitReached,
  type LimitsMechanism,
  type SandboxLimitValues,
} from './limits';

// Limits per sandbox, the part that touches the host (limits.ts is the pure part). At start the worker
// picks a mechanism once: a cgroup v2 subtree it may write (SANDBOX_CGROUP, or its own cgroup where the
// kernel lets it), else cgroup v1's pids and memory hierarchies under its own cgroups, else (as root) a uid
// per concurrent sandbox from SANDBOX_UID_RANGE, else nothing better than RLIMIT_NPROC of its own uid.
// Each command then gets a lease: its own cgroup (or uid), removed when the command ends.

export type LimitsMode = 'auto' | 'cgroup' | 'uid-range';

export interface LimiterOptions {
  mode: LimitsMode;
  /** SANDBOX_CGROUP: a delegated cgroup v2 directory; null: look for one. */
  delegated: string | null;
  uidRange: { first: number; last: number };
  /** The service runs as root (a uid of the range can be used). */
  asRoot: boolean;
  /** Test seams for a host's view: /proc/self/cgroup and /proc/self/mountinfo. */
  procCgroup?: string;
  mountInfo?: string;
}

/** What one command runs with, and what it ran into once it ended. */
export interface SandboxLease {
  /** The uid it runs as (uid-range), or null: the configured SANDBOX_UID. */
  uid: number | null;
  /** The files it writes itself into before exec (limits.ts enterArgv; entryFile says which). */
  entryFiles: string[];
  /** Kills what is left of it, reads what the kernel counted, removes its cgroup; the limits it hit. */
  release(exit: { exitCode: number | null; signal: string | null; stderr: string }): Promise<LimitReached[]>;
}

export interface Limiter {
  readonly mechanism: LimitsMechanism;
  readonly values: SandboxLimitValues;
  lease(): Promise<SandboxLease>;
}

export class LimitsUnavailableError extends Error {}

export function createLimiter(values: SandboxLimitValues, options: LimiterOptions): Limiter {
  const mechanism = chooseMechanism(values, options);
  const instance = instanceGroupName(process.pid, randomBytes(4).toString('hex'));
  switch (mechanism.kind) {
    case 'cgroup-v2':
    case 'cgroup-v1':
      return new CgroupLimiter(mechanism, values, instance);
    case 'uid-range':
      return new UidRangeLimiter(mechanism, values);
    case 'shared-uid':
      return {
        mechanism,
        values,
        lease: async () => ({
          uid: null,
          entryFiles: [],
          release: async (exit) => limitsFromCounters({}, exit, values),
        }),
      };
  }
}

function chooseMechanism(values: SandboxLimitValues, options: LimiterOptions): LimitsMechanism {
  if (options.mode !== 'uid-range') {
    const procCgroup = parseProcCgroup(options.procCgroup ?? readOr('/proc/self/cgroup', ''));
    const mounts = parseMountInfo(options.mountInfo ?? readOr('/proc/self/mountinfo', ''));
    const failures: string[] = [];
    for (const candidate of cgroupCandidates(procCgroup, mounts, options.delegated)) {
      const why = probeCgroup(candidate, values);
      if (why === null) {
        removeStaleGroups(candidate);
        return candidate;
      }
      failures.push(why);
    }
    if (options.mode === 'cgroup')
      throw new LimitsUnavailableError(
        `SANDBOX_LIMITS=cgroup, but no cgroup can be used: ${failures.join('; ') || 'none found in /proc/self/cgroup'}`,
      );
  }
  if (options.asRoot) return { kind: 'uid-range', ...options.uidRange };
  if (options.mode === 'uid-range')
    throw new LimitsUnavailableError('SANDBOX_LIMITS=uid-range needs the service to run as root');
  return { kind: 'shared-uid' };
}

/**
 * Where a command writes itself to enter a group. v1: `tasks`, as one thread (the entering shell has one).
 * The kernel moves a thread that moves itself without taking the global lock that moving a whole process
 * takes, whose first taker after a quiet spell waits out an RCU grace period: 7–23 ms per command here
 * (docs/performance.md), against under 1 ms. v2 has no such file outside threaded groups: `cgroup.procs`.
 */
function entryFile(mechanism: Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>, dir: string): string {
  return path.join(dir, mechanism.kind === 'cgroup-v1' ? 'tasks' : 'cgroup.procs');
}

/** The directories that hold one sandbox's cgroups, per hierarchy (one for v2). */
function parents(mechanism: Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>): string[] {
  return mechanism.kind === 'cgroup-v2' ? [mechanism.dir] : [mechanism.pidsDir, mechanism.memoryDir];
}

/** Makes, limits and removes a throw-away group: null when that works, else why not. */
function probeCgroup(
  mechanism: Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>,
  values: SandboxLimitValues,
): string | null {
  // Named like an instance's group: one a crash left behind is swept like theirs.
  const name = instanceGroupName(process.pid, randomBytes(4).toString('hex'));
  const made: string[] = [];
  try {
    if (mechanism.kind === 'cgroup-v2') {
      const controllers = readOr(path.join(mechanism.dir, 'cgroup.controllers'), '').split(/\s+/);
      for (const c of ['pids', 'memory'])
        if (!controllers.includes(c)) return `${mechanism.dir}: the ${c} controller is not available`;
      enableControllers(mechanism.dir);
    }
    for (const parent of parents(mechanism)) {
      const dir = path.join(parent, name);
      fs.mkdirSync(dir);
      made.push(dir);
    }
    setLimits(mechanism, made, values);
    return null;
  } catch (err) {
    return `${mechanism.kind} at ${parents(mechanism).join(', ')}: ${(err as Error).message}`;
  } finally {
    for (const dir of made) rmdirQuietly(dir);
  }
}

/** v2: children of `dir` may use pids and memory (fails, EBUSY, where `dir` itself holds processes). */
function enableControllers(dir: string): void {
  const enabled = readOr(path.join(dir, 'cgroup.subtree_control'), '').split(/\s+/);
  if (enabled.includes('pids') && enabled.includes('memory')) return;
  fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+pids +memory');
}

function setLimits(
  mechanism: Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>,
  dirs: string[],
  values: SandboxLimitValues,
): void {
  if (mechanism.kind === 'cgroup-v2') {
    const [dir] = dirs as [string];
    fs.writeFileSync(path.join(dir, 'pids.max'), String(values.processes));
    fs.writeFileSync(path.join(dir, 'memory.max'), String(values.memoryBytes));
    writeIfPresent(path.join(dir, 'memory.swap.max'), '0');
    return;
  }
  const [pids, memory] = dirs as [string, string];
  fs.writeFileSync(path.join(pids, 'pids.max'), String(values.processes));
  fs.writeFileSync(path.join(memory, 'memory.limit_in_bytes'), String(values.memoryBytes));
  // memory+swap no higher than memory: the sandbox cannot swap its way past the limit.
  writeIfPresent(path.join(memory, 'memory.memsw.limit_in_bytes'), String(values.memoryBytes));
}

class CgroupLimiter implements Limiter {
  private next = 1;
  private made = false;

  constructor(
    readonly mechanism: Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>,
    readonly values: SandboxLimitValues,
    private readonly instance: string,
  ) {}

  async lease(): Promise<SandboxLease> {
    const groups = parents(this.mechanism).map((parent) => path.join(parent, this.instance));
    if (!this.made) {
      for (const group of groups) fs.mkdirSync(group, { recursive: true });
      if (this.mechanism.kind === 'cgroup-v2') enableControllers(groups[0]!);
      this.made = true;
      // Empty by then (each command's group is removed as it ends); what is not is left to the next start.
      process.once('exit', () => groups.forEach(rmdirQuietly));
    }
    const name = String(this.next++);
    const dirs = groups.map((group) => path.join(group, name));
    try {
      for (const dir of dirs) await fs.promises.mkdir(dir);
      setLimits(this.mechanism, dirs, this.values);
    } catch (err) {
      await Promise.all(dirs.map((dir) => removeGroup(dir)));
      throw new Error(`could not make the sandbox's cgroup ${dirs.join(', ')}: ${(err as Error).message}`);
    }
    return {
      uid: null,
      entryFiles: dirs.map((dir) => entryFile(this.mechanism, dir)),
      release: async (exit) => {
        const counters = readCounters(this.mechanism, dirs);
        await Promise.all(dirs.map((dir) => removeGroup(dir)));
        return limitsFromCounters(counters, exit, this.values);
      },
    };
  }
}

function readCounters(
  mechanism: Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>,
  dirs: string[],
): CgroupCounters {
  const [pidsDir, memoryDir = pidsDir] = dirs as [string, string?];
  const pidsEvents = readOr(path.join(pidsDir, 'pids.events'), '');
  if (mechanism.kind === 'cgroup-v2') {
    return {
      pidsMax: keyedCounter(pidsEvents, 'max'),
      oomKills: keyedCounter(readOr(path.join(memoryDir, 'memory.events'), ''), 'oom_kill'),
    };
  }
  const failcnt = Number(readOr(path.join(memoryDir, 'memory.failcnt'), '').trim());
  return {
    pidsMax: keyedCounter(pidsEvents, 'max'),
    oomKills: keyedCounter(readOr(path.join(memoryDir, 'memory.oom_control'), ''), 'oom_kill'),
    memoryFailures: Number.isFinite(failcnt) ? failcnt : undefined,
  };
}

/**
 * Kills whatever is still in the group (cgroup.kill on v2, each pid of cgroup.procs on v1, until it is empty)
 * and removes it. A group that will not go (a process stuck in the kernel) is left; the next start's sweep of
 * this instance's dead groups takes it.
 */
export async function removeGroup(dir: string): Promise<boolean> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      fs.rmdirSync(dir);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      if (code !== 'EBUSY') return false;
    }
    if (!writeIfPresent(path.join(dir, 'cgroup.kill'), '1')) {
      for (const pid of readOr(path.join(dir, 'cgroup.procs'), '').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** Groups of service instances whose process is gone (a crashed worker): emptied and removed. */
function removeStaleGroups(mechanism: Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>): void {
  for (const parent of parents(mechanism)) {
    let entries: string[];
    try {
      entries = fs.readdirSync(parent);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const pid = instanceGroupPid(entry);
      if (pid === null || alive(pid)) continue;
      const group = path.join(parent, entry);
      void (async () => {
        for (const child of readdirOr(group)) {
          const dir = path.join(group, child);
          if (fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) await removeGroup(dir);
        }
        await removeGroup(group);
      })().catch(() => undefined);
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * As root without cgroups: each command runs as a uid of SANDBOX_UID_RANGE no other running sandbox of this
 * service has, so RLIMIT_NPROC (per uid, host-wide) is its own. Memory stays RLIMIT_DATA, per process.
 */
class UidRangeLimiter implements Limiter {
  private readonly busy = new Set<number>();

  constructor(
    readonly mechanism: Extract<LimitsMechanism, { kind: 'uid-range' }>,
    readonly values: SandboxLimitValues,
  ) {}

  async lease(): Promise<SandboxLease> {
    let uid = this.mechanism.first;
    while (this.busy.has(uid) && uid <= this.mechanism.last) uid++;
    if (uid > this.mechanism.last)
      throw new Error(
        `every uid of SANDBOX_UID_RANGE (${this.mechanism.first}-${this.mechanism.last}) runs a sandbox: widen it`,
      );
    this.busy.add(uid);
    return {
      uid,
      entryFiles: [],
      release: async (exit) => {
        this.busy.delete(uid);
        return limitsFromCounters({}, exit, this.values);
      },
    };
  }
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function readdirOr(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Writes `value` to a control file the kernel may not offer; whether it was there. */
function writeIfPresent(file: string, value: string): boolean {
  // Never created: a cgroup directory refuses new files, and the error would not say ENOENT.
  if (!fs.existsSync(file)) return false;
  fs.writeFileSync(file, value);
  return true;
}

function rmdirQuietly(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // Busy or gone: the next start's sweep removes what a dead instance left.
  }
}
