import type { ServiceConfig } from '../../config/service-config';
import { bwrapArgv, type BwrapSettings } from './bwrap-argv';
import { createLimiter, LimitsUnavailableError } from './cgroups';
import { limitsStatus, type SandboxLimitsStatus } from './limits';
import { egressEnvironment } from './egress-bridge';
import { cacheEnvironment } from './cache-layout';
import { GRADLE_HOME_IN_SANDBOX } from './gradle-home';
import { toolchainPaths } from './toolchain-paths';
import type { Sandbox, SandboxPolicy } from './types';

// Every untrusted process — maker agents, the built-in agent's commands, reviewer agents, gates — is
// started through a Sandbox (docs/design.md §10.9). Under bubblewrap it sees a read-only system,
// its own work directory and nothing else of the host: no $DATA_DIR, no other workspace, no service
// process in /proc (own pid namespace), no network but the egress proxy's allow-list, an unprivileged uid.

/** HOME inside the sandbox unless the policy gives one: private and empty on every run (in the sandbox's own /tmp). */
export const SANDBOX_HOME = '/tmp/home';

export function createSandbox(
  config: Pick<Readonly<ServiceConfig>, 'sandbox'>,
  env: NodeJS.ProcessEnv = process.env,
): Sandbox {
  const s = config.sandbox;
  if (s.mode === 'none') {
    return {
      mode: 'none',
      wrap: (argv) => argv,
      lease: async () => null,
      limits: null,
      environment: (e, policy) => ({ ...e, ...caches(policy) }),
      owner: null,
    };
  }
  // As root, bwrap drops to an unprivileged uid with setpriv; otherwise a user namespace maps the
  // service's own uid, which is unprivileged already.
  const asRoot = process.getuid?.() === 0;
  const toolchains = toolchainPaths(env);
  const values = {
    processes: s.maxProcesses,
    memoryBytes: s.maxMemoryBytes,
    fileBytes: s.maxFileBytes,
    tmpBytes: s.maxTmpBytes,
    workspaceBytes: s.maxWorkspaceBytes,
  };
  const limiter = createLimiter(values, {
    mode: s.limits,
    delegated: s.cgroup,
    uidRange: s.uidRange,
    asRoot,
  });
  const { kind } = limiter.mechanism;
  const settings: BwrapSettings = {
    asRoot,
    uid: s.uid,
    gid: s.gid,
    readOnlyPaths: [...toolchains.paths, ...s.readOnlyPaths],
    writablePaths: s.writablePaths,
    limits: values,
    processLimit: kind === 'cgroup-v2' || kind === 'cgroup-v1' ? 'cgroup' : 'uid',
  };
  return {
    mode: 'bwrap',
    wrap: (argv, policy, cwd, egressSocket, lease) => bwrapArgv(settings, policy, cwd, argv, egressSocket, lease),
    lease: () => limiter.lease(),
    limits: { mechanism: limiter.mechanism, values, workspaceCheckMs: s.workspaceCheckSeconds * 1000 },
    environment: (e, policy) => ({
      ...e,
      ...toolchains.env,
      HOME: policy.home ?? SANDBOX_HOME,
      TMPDIR: '/tmp',
      ...confinedCaches(policy),
      ...(policy.egress ? egressEnvironment() : {}),
      ...GIT_TRUSTS_THE_SANDBOX,
    }),
    owner: asRoot ? { uid: s.uid, gid: s.gid, groupWritable: kind === 'uid-range' } : null,
  };
}

/**
 * The limits a worker on this host would apply, for /readyz (the API detects them as the worker does; each
 * worker prints its own at start). null when unconfined; a string when SANDBOX_LIMITS cannot be met here.
 */
export function sandboxLimitsStatus(
  config: Pick<Readonly<ServiceConfig>, 'sandbox'>,
): SandboxLimitsStatus | string | null {
  try {
    const limits = createSandbox(config).limits;
    return limits && limitsStatus(limits.mechanism, limits.values, limits.workspaceCheckMs);
  } catch (err) {
    if (err instanceof LimitsUnavailableError) return err.message;
    throw err;
  }
}

// git inside the sandbox meets directories the service created as root (a worktree's git dir); the
// sandbox is the boundary, so its git need not refuse them as "dubious ownership".
const GIT_TRUSTS_THE_SANDBOX = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' };

function caches(policy: SandboxPolicy): Record<string, string> {
  return policy.caches ? cacheEnvironment(policy.caches.dir) : {};
}

/** Confined, read-only caches give Gradle a home of its own (gradle-home.ts); unconfined, nothing is read-only. */
function confinedCaches(policy: SandboxPolicy): Record<string, string> {
  const env = caches(policy);
  return policy.caches?.access === 'use' ? { ...env, GRADLE_USER_HOME: GRADLE_HOME_IN_SANDBOX } : env;
}
