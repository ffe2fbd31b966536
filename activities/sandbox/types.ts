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
  /** Agents that call their model API need it; gates get none unless a repository or request opts in. */
  network: boolean;
  /**
   * The repository's package caches (repository-caches.ts), the tools pointed at them: writable for set-up
   * (`install`), read-only for makers and gates (`use`), so nothing they run can plant a package that a
   * later verification would build from.
   */
  caches?: { dir: string; access: 'install' | 'use' };
}

export interface Sandbox {
  readonly mode: SandboxMode;
  /** The argv that runs `argv` in `cwd` confined by `policy` (unchanged when mode is none). */
  wrap(argv: string[], policy: SandboxPolicy, cwd: string): string[];
  /** The environment the confined command sees, from the allow-listed one its caller built. */
  environment(env: Record<string, string>, policy: SandboxPolicy): Record<string, string>;
  /** The uid/gid that must own writable trees (null: the service's own). */
  readonly owner: { uid: number; gid: number } | null;
}
