import fs from 'node:fs';
import type { SandboxLease } from './cgroups';
import { bridgedArgv, EGRESS_SOCKET_IN_SANDBOX } from './egress-bridge';
import { withGradleHome } from './gradle-home';
import { enterArgv } from './limits';
import type { SandboxPolicy } from './types';

export interface BwrapSettings {
  asRoot: boolean;
  uid: number;
  gid: number;
  /** Host paths mounted read-only besides the system (toolchains, agent CLIs). */
  readOnlyPaths: string[];
  /** Host paths writable in every sandbox (operator-chosen shared caches). */
  writablePaths: string[];
  limits: { processes: number; fileBytes: number; memoryBytes: number; tmpBytes: number };
  /**
   * Where processes are counted: `cgroup` (each command's own cgroup holds pids.max; RLIMIT_NPROC is left at
   * the worker's own) or `uid` (RLIMIT_NPROC of the uid the command runs as).
   */
  processLimit: 'cgroup' | 'uid';
}

// The read-only system: /usr and /etc, plus the merged-/usr links or directories beside them.
const SYSTEM_DIRS = ['/usr', '/etc', '/opt'];
const USR_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The bubblewrap command line for `argv` under `policy`. Namespaces: pid (the host's processes are not
 * visible and everything dies with the sandbox), ipc, uts, cgroup, and always net: a sandbox with network
 * reaches the outside only through the egress proxy's socket, mounted at EGRESS_SOCKET_IN_SANDBOX, which
 * the bridge in front of the command offers on loopback (egress-bridge.ts) — never the host's loopback or
 * network. --die-with-parent: a worker that dies takes its sandboxes with it. --new-session: no terminal
 * injection into the worker's session.
 */
export function bwrapArgv(
  settings: BwrapSettings,
  policy: SandboxPolicy,
  cwd: string,
  argv: string[],
  egressSocket?: string,
  lease?: Pick<SandboxLease, 'uid' | 'entryFiles'>,
): string[] {
  if (policy.egress && !egressSocket) throw new Error('a sandbox with network needs the egress proxy’s socket');
  const args = [
    'bwrap',
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--unshare-net',
  ];
  if (settings.asRoot) {
    // setpriv (below) needs these two to become the unprivileged uid; it then drops every capability.
    args.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID');
  } else {
    args.push('--unshare-user', '--uid', String(settings.uid), '--gid', String(settings.gid));
  }
  for (const dir of SYSTEM_DIRS) args.push('--ro-bind-try', dir, dir);
  for (const link of USR_LINKS) {
    const target = readLink(link);
    if (target !== null) args.push('--symlink', target, link);
    else args.push('--ro-bind-try', link, link);
  }
  // /tmp is memory: bounded (SANDBOX_MAX_TMP_BYTES), and with cgroups charged to the sandbox's memory too.
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--size', String(settings.limits.tmpBytes));
  args.push('--tmpfs', '/tmp');
  const caches = policy.caches ? [policy.caches.dir] : [];
  const writable = [...(policy.writable ?? []), ...(policy.caches?.access === 'install' ? caches : [])];
  const readOnly = [...(policy.readOnly ?? []), ...(policy.caches?.access === 'use' ? caches : [])];
  const egress = policy.egress && egressSocket ? [EGRESS_SOCKET_IN_SANDBOX] : [];
  const mounts = [
    ...settings.readOnlyPaths,
    ...settings.writablePaths,
    ...readOnly,
    ...writable,
    ...egress,
    policy.workDir,
  ];
  for (const dir of ancestorsToCreate(mounts)) args.push('--perms', '0755', '--dir', dir);
  for (const p of settings.readOnlyPaths) args.push('--ro-bind-try', p, p);
  for (const p of settings.writablePaths) args.push('--bind-try', p, p);
  for (const p of readOnly) args.push('--ro-bind', p, p);
  for (const p of writable) args.push('--bind', p, p);
  if (egress.length > 0 && egressSocket) args.push('--bind', egressSocket, EGRESS_SOCKET_IN_SANDBOX);
  args.push('--bind', policy.workDir, policy.workDir);
  for (const sub of policy.readOnlyInWorkDir ?? []) {
    const p = `${policy.workDir}/${sub}`;
    args.push('--ro-bind-try', p, p);
  }
  args.push('--chdir', cwd, '--');
  // Per process: file size is the largest file one process may write, data its writable memory. Processes:
  // with a cgroup, pids.max counts the sandbox's own, and RLIMIT_NPROC (which counts a uid's processes
  // host-wide) stays the worker's own (it cannot be raised without CAP_SYS_RESOURCE); otherwise RLIMIT_NPROC
  // of the uid — the sandbox's own under uid-range.
  const { processes, fileBytes, memoryBytes } = settings.limits;
  const nproc = settings.processLimit === 'cgroup' ? [] : [`--nproc=${processes}`];
  args.push('prlimit', ...nproc, `--fsize=${fileBytes}`, `--data=${memoryBytes}`, '--');
  const uid = lease?.uid ?? settings.uid;
  if (settings.asRoot) {
    args.push(
      'setpriv',
      `--reuid=${uid}`,
      `--regid=${settings.gid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--',
    );
  }
  // Gradle needs a writable home: read-only caches give it one of its own (gradle-home.ts).
  const inner = policy.caches?.access === 'use' ? withGradleHome(policy.caches.dir, argv) : argv;
  const command = [...args, ...(policy.egress ? bridgedArgv(process.execPath, policy.egress, inner) : inner)];
  // Into its cgroups before bwrap starts; under uid-range with a umask that leaves the group write access.
  const sharedGroup = lease?.uid != null && lease.uid !== settings.uid;
  return enterArgv(lease?.entryFiles ?? [], sharedGroup ? '002' : null, command);
}

// bwrap makes missing parents of a mount point mode 0700, which the unprivileged uid cannot traverse:
// create them first, world-traversable (they are empty directories of the sandbox's own root).
function ancestorsToCreate(mounts: string[]): string[] {
  const covered = (p: string) =>
    ['/usr', '/etc', '/opt', '/proc', '/dev', ...mounts].some((m) => p === m || p.startsWith(`${m}/`));
  const dirs = new Set<string>();
  for (const mount of mounts) {
    const parts = mount.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = `/${parts.slice(0, i).join('/')}`;
      if (dir !== '/tmp' && !covered(dir)) dirs.add(dir);
    }
  }
  return [...dirs].sort();
}

function readLink(p: string): string | null {
  try {
    return fs.readlinkSync(p);
  } catch {
    return null;
  }
}
