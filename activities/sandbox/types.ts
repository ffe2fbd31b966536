import type { EgressEntry } from '../../domain/egress';
import type { SandboxLease } from './cgroups';
import type { LimitsMechanism, SandboxLimitValues } from './limits';

// What a sandbox is, apart from how one is made (sandbox.ts): the modules that build it need only these.

export type SandboxMode = 'bwrap' | 'none';

/** What one command may touch. Paths are host paths and appear at the same place inside. */
export interface SandboxPolicy {
  /** The one writable tree: the loop's workspace or verification checkout. */
  workDir: string;
  /** Sub-paths of workDir mounted read-only over it (a maker must not rewrite `.git`). */
  readOnlyInWorkDir?: string[];
  /** Other host paths the command may read (the maker's prompt, the workspace's .git for a worktree). */
  readOnly?: string[];
  /** Other host paths the command may write (the agent's report directory). */
  writable?: string[];
  /**
   * The command's HOME, inside one of `writable` (a preset agent's per-run home, outside /tmp: Codex will not
   * put its helpers under /tmp); default a fresh, empty SANDBOX_HOME.
   */
  home?: string;
  /**
   * Network: null for none at all; otherwise the hosts the sandbox may reach through the egress proxy
   * (activities/sandbox/egress-proxy.ts) and nothing else — the operator's list for the role, narrowed by
   * the request (domain/egress.ts). Agents calling their model API and set-up need it; gates only on request.
   */
  egress: readonly EgressEntry[] | null;
  /**
   * The loop's own package caches (loop-caches.ts), the tools pointed at them: writable for set-up
   * (`install`), read-only for makers and gates (`use`), so nothing they run can plant a package that a
   * later verification would build from. The shared caches are only ever mounted for their fetch steps.
   */
  caches?: { dir: string; access: 'install' | 'use' };
}

export interface Sandbox {
  readonly mode: SandboxMode;
  /**
   * The argv that runs `argv` in `cwd` confined by `policy` (unchanged when mode is none); `egressSocket` is
   * the host path of the egress proxy's socket when the policy has network.
   */
  wrap(argv: string[], policy: SandboxPolicy, cwd: string, egressSocket?: string, lease?: SandboxLease): string[];
  /**
   * The per-sandbox limits of one command (its own cgroup, or uid): taken before it starts, released after it
   * ends (cgroups.ts). null when unconfined.
   */
  lease(): Promise<SandboxLease | null>;
  /** What limits a command and how; null when unconfined (SANDBOX=none). */
  readonly limits: SandboxLimitsInForce | null;
  /** The environment the confined command sees, from the allow-listed one its caller built. */
  environment(env: Record<string, string>, policy: SandboxPolicy): Record<string, string>;
  /**
   * The uid/gid that must own writable trees (null: the service's own). groupWritable: commands run as other
   * uids of the same group (uid-range), so the trees must be writable by the group too.
   */
  readonly owner: { uid: number; gid: number; groupWritable: boolean } | null;
}

export interface SandboxLimitsInForce {
  mechanism: LimitsMechanism;
  values: SandboxLimitValues;
  /** How often a running command's writable trees are measured against values.workspaceBytes. */
  workspaceCheckMs: number;
}
