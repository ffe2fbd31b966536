// Limits per sandbox (docs/threat-model.md, "Limits"): the pure part — which mechanism a host offers, where
// a sandbox's cgroups go, how a command enters them, and how a limit that was hit is named. The part that
// touches /sys/fs/cgroup is cgroups.ts.

/** The configured limits, each for one sandbox (one command) as a whole unless said otherwise. */
export interface SandboxLimitValues {
  /** Processes and threads of the sandbox. */
  processes: number;
  /** Memory of the sandbox (with cgroups: all its processes and its /tmp together; otherwise per process). */
  memoryBytes: number;
  /** Largest file one process may write (RLIMIT_FSIZE). */
  fileBytes: number;
  /** Size of the sandbox's private /tmp (a tmpfs). */
  tmpBytes: number;
  /** How much the writable trees (workspace or checkout, the policy's writable dirs) may grow during one command. */
  workspaceBytes: number;
}

/**
 * How processes and memory are limited per sandbox:
 * - `cgroup-v2` / `cgroup-v1`: a cgroup of its own for each command (pids and memory controllers);
 * - `uid-range`: each concurrent sandbox runs as its own uid from SANDBOX_UID_RANGE, so RLIMIT_NPROC (which
 *   counts a uid's processes host-wide) is the sandbox's own; memory stays per process (RLIMIT_DATA);
 * - `shared-uid`: neither is possible (no writable cgroup, and the service is not root): RLIMIT_NPROC
 *   counts every process of the service's uid, so concurrent sandboxes share it.
 */
export type LimitsMechanism =
  | { kind: 'cgroup-v2'; dir: string }
  | { kind: 'cgroup-v1'; pidsDir: string; memoryDir: string }
  | { kind: 'uid-range'; first: number; last: number }
  | { kind: 'shared-uid' };

export type LimitName = 'processes' | 'memory' | 'file' | 'tmp' | 'workspace';

/** A limit a command ran into, named for a person: always the environment's doing, never another loop's. */
export interface LimitReached {
  limit: LimitName;
  message: string;
}

/** One line of /proc/self/cgroup: `hierarchy-id:controllers:path`. */
export interface CgroupMembership {
  hierarchy: string;
  controllers: string[];
  path: string;
}

export function parseProcCgroup(text: string): CgroupMembership[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [hierarchy = '', controllers = '', ...rest] = line.split(':');
      return { hierarchy, controllers: controllers.split(',').filter(Boolean), path: rest.join(':') || '/' };
    });
}

/** A cgroup filesystem mounted in this mount namespace, from /proc/self/mountinfo. */
export interface CgroupMount {
  type: 'cgroup' | 'cgroup2';
  /** The cgroup this mount shows at its mount point (not `/` inside a cgroup namespace of a container). */
  root: string;
  mountPoint: string;
  /** v1: the controllers of the hierarchy (from the super options). */
  controllers: string[];
}

export function parseMountInfo(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    // id parent major:minor root mount-point options [optional fields] - type source super-options
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const fields = before.split(' ');
    const [type, , superOptions = ''] = after.split(' ');
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    const root = unescapeMount(fields[3] ?? '/');
    const mountPoint = unescapeMount(fields[4] ?? '');
    const controllers = type === 'cgroup' ? superOptions.split(',').filter((o) => CONTROLLERS.includes(o)) : [];
    mounts.push({ type, root, mountPoint, controllers });
  }
  return mounts;
}

const CONTROLLERS = ['pids', 'memory', 'cpu', 'cpuacct', 'cpuset', 'blkio', 'devices', 'freezer', 'hugetlb'];

function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Where this process's own cgroup of a hierarchy is in this mount namespace; null when its mount does not show it. */
function ownDir(mount: CgroupMount, cgroupPath: string): string | null {
  const root = mount.root === '/' ? '' : mount.root;
  if (root && cgroupPath !== root && !cgroupPath.startsWith(`${root}/`)) return null;
  const rest = cgroupPath.slice(root.length).replace(/^\/+/, '');
  return rest ? `${mount.mountPoint}/${rest}` : mount.mountPoint;
}

/**
 * Where the sandboxes' cgroups could go, best first: under this process's own cgroup in each hierarchy
 * (never elsewhere in the host's tree). cgroup v2 needs a directory whose children may use the pids and
 * memory controllers: `delegated` (SANDBOX_CGROUP, an operator's delegated subtree) or this process's own
 * cgroup (usable only where the kernel lets it enable controllers, e.g. a container's root). cgroup v1
 * needs both the pids and the memory hierarchy. Whether a candidate really works is cgroups.ts's probe.
 */
export function cgroupCandidates(
  procCgroup: CgroupMembership[],
  mounts: CgroupMount[],
  delegated: string | null,
): Array<Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>> {
  const candidates: Array<Extract<LimitsMechanism, { kind: 'cgroup-v2' | 'cgroup-v1' }>> = [];
  if (delegated) candidates.push({ kind: 'cgroup-v2', dir: delegated.replace(/\/+$/, '') });
  const unified = procCgroup.find((m) => m.hierarchy === '0' && m.controllers.length === 0);
  const v2 = mounts.find((m) => m.type === 'cgroup2');
  const v2Dir = unified && v2 ? ownDir(v2, unified.path) : null;
  if (v2Dir && !delegated) candidates.push({ kind: 'cgroup-v2', dir: v2Dir });
  const v1Dir = (controller: string): string | null => {
    const membership = procCgroup.find((m) => m.controllers.includes(controller));
    const mount = mounts.find((m) => m.type === 'cgroup' && m.controllers.includes(controller));
    return membership && mount ? ownDir(mount, membership.path) : null;
  };
  const pidsDir = v1Dir('pids');
  const memoryDir = v1Dir('memory');
  if (pidsDir && memoryDir) candidates.push({ kind: 'cgroup-v1', pidsDir, memoryDir });
  return candidates;
}

/**
 * The parent cgroup of one service instance's sandboxes: `loop-sandboxes.<pid>.<random>`. Two services on one
 * host (or in one cgroup) never share one, and a crashed instance's is recognised by its dead pid.
 */
export function instanceGroupName(pid: number, random: string): string {
  return `${INSTANCE_PREFIX}${pid}.${random}`;
}

const INSTANCE_PREFIX = 'loop-sandboxes.';

/** The pid that made an instance group, or null when `name` is not one. */
export function instanceGroupPid(name: string): number | null {
  const match = new RegExp(`^${INSTANCE_PREFIX.replace('.', '\\.')}(\\d+)\\.[0-9a-f]+$`).exec(name);
  return match ? Number(match[1]) : null;
}

/**
 * The command line that puts the command into its cgroups before it runs — the shell writes `0` (itself)
 * into each entry file and then becomes the command (exec: same pid), so nothing the command starts is
 * ever outside them. `umask` (uid-range: a later sandbox's uid must be able to write what this one made,
 * through the shared group) is set the same way.
 */
export function enterArgv(entryFiles: string[], umask: string | null, argv: string[]): string[] {
  if (entryFiles.length === 0 && umask === null) return argv;
  const script = [
    'n=$1; shift',
    'while [ "$n" -gt 0 ]; do echo 0 > "$1" || { echo "sandbox: cannot enter cgroup $1" >&2; exit 125; }; shift; n=$((n-1)); done',
    ...(umask === null ? [] : [`umask ${umask}`]),
    'exec "$@"',
  ].join('\n');
  return ['/bin/sh', '-c', script, 'sandbox-enter', String(entryFiles.length), ...entryFiles, ...argv];
}

/** Bytes for a person: 1 GiB, 512 MiB, 1.5 GiB, 4096 bytes. */
export function formatBytes(bytes: number): string {
  const units: Array<[string, number]> = [
    ['TiB', 1024 ** 4],
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ];
  for (const [unit, size] of units) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} bytes`;
}

export function limitReached(limit: LimitName, values: SandboxLimitValues, how?: string): LimitReached {
  const text: Record<LimitName, string> = {
    processes: `sandbox process limit (${values.processes}) reached`,
    memory: `sandbox memory limit (${formatBytes(values.memoryBytes)}) reached — OOM kill`,
    file: `sandbox file size limit (${formatBytes(values.fileBytes)}) reached`,
    tmp: `sandbox /tmp limit (${formatBytes(values.tmpBytes)}) reached`,
    workspace: `sandbox workspace write limit (${formatBytes(values.workspaceBytes)}) reached`,
  };
  return { limit, message: how ? `${text[limit]}: ${how}` : text[limit] };
}

/** Counters of a cgroup after its command, as read from its files (absent: the kernel does not offer it). */
export interface CgroupCounters {
  /** pids.events `max`: forks refused at pids.max. */
  pidsMax?: number;
  /** memory.events `oom_kill` (v2) or memory.oom_control `oom_kill` (v1). */
  oomKills?: number;
  /** v1 memory.failcnt: allocations that hit the limit (used only where oom_kill is not counted). */
  memoryFailures?: number;
}

/** Reads `key value` lines (pids.events, memory.events, memory.oom_control). */
export function keyedCounter(text: string, key: string): number | undefined {
  const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * Which limits a finished command ran into, from what the kernel counted and how it ended. Process and memory
 * limits are counted by the cgroup; the file size limit shows as SIGXFSZ; a full /tmp only as ENOSPC in
 * what the command printed (a tmpfs leaves no counter) — named as the /tmp limit since the workspace's disk
 * is checked separately.
 */
export function limitsFromCounters(
  counters: CgroupCounters,
  exit: { exitCode: number | null; signal: string | null; stderr: string },
  values: SandboxLimitValues,
): LimitReached[] {
  const reached: LimitReached[] = [];
  if ((counters.pidsMax ?? 0) > 0) reached.push(limitReached('processes', values, 'a fork failed'));
  const killed = exit.signal === 'SIGKILL' || exit.exitCode === 137;
  if ((counters.oomKills ?? 0) > 0 || (counters.oomKills === undefined && (counters.memoryFailures ?? 0) > 0 && killed))
    reached.push(limitReached('memory', values));
  if (exit.signal === 'SIGXFSZ' || exit.exitCode === 128 + 25 || /File size limit exceeded/.test(exit.stderr))
    reached.push(limitReached('file', values));
  if (exit.exitCode !== 0 && /ENOSPC|No space left on device/.test(exit.stderr))
    reached.push(limitReached('tmp', values, 'the command reported ENOSPC (or the host disk is full)'));
  return reached;
}

/** What /readyz and the worker's start line say about the limits in force. */
export interface SandboxLimitsStatus {
  mechanism: LimitsMechanism['kind'];
  /** The cgroup directories sandboxes' groups go under, or the uid range; empty for shared-uid. */
  where: string;
  /** Whether processes and memory are counted for each sandbox as a whole (else per uid / per process). */
  perSandbox: { processes: boolean; memory: boolean };
  processes: number;
  memoryBytes: number;
  fileBytes: number;
  tmpBytes: number;
  workspaceBytes: number;
  workspaceCheckSeconds: number;
  note: string;
}

export function limitsStatus(
  mechanism: LimitsMechanism,
  values: SandboxLimitValues,
  workspaceCheckMs: number,
): SandboxLimitsStatus {
  const cgroup = mechanism.kind === 'cgroup-v2' || mechanism.kind === 'cgroup-v1';
  const where =
    mechanism.kind === 'cgroup-v2'
      ? mechanism.dir
      : mechanism.kind === 'cgroup-v1'
        ? `${mechanism.pidsDir}, ${mechanism.memoryDir}`
        : mechanism.kind === 'uid-range'
          ? `uids ${mechanism.first}-${mechanism.last}`
          : '';
  const notes: Record<LimitsMechanism['kind'], string> = {
    'cgroup-v2': 'a cgroup v2 group per command: processes and memory (with its /tmp) counted per sandbox',
    'cgroup-v1':
      'a cgroup v1 pids and memory group per command: processes and memory (with its /tmp) counted per sandbox',
    'uid-range': 'a uid per concurrent command: processes counted per sandbox, memory per process (no usable cgroup)',
    'shared-uid':
      "no usable cgroup and not root: processes are counted for the service's uid across all sandboxes, memory per process",
  };
  return {
    mechanism: mechanism.kind,
    where,
    perSandbox: { processes: mechanism.kind !== 'shared-uid', memory: cgroup },
    ...values,
    workspaceCheckSeconds: workspaceCheckMs / 1000,
    note: `${notes[mechanism.kind]}; /tmp ${formatBytes(values.tmpBytes)}; workspace growth measured every ${workspaceCheckMs / 1000} s, at most ${formatBytes(values.workspaceBytes)}`,
  };
}
