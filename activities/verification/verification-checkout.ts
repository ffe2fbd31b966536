import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivityDeps } from '../deps';
import { git } from '../git';
import { handOver } from '../sandbox/hand-over';

/**
 * A clean checkout of exactly `commit`, made afresh for every verification (ARCHITECTURE decision 10):
 * files the maker left untracked, ignored or excluded in its workspace never reach a gate, and nothing a
 * previous gate run wrote survives. A detached worktree of the loop's repository: no clone, and tools
 * that ask git questions still can (its .git is mounted read-only into the gate's sandbox).
 */
export async function freshVerificationCheckout(deps: ActivityDeps, loopId: string, workspace: string, commit: string): Promise<string> {
  const dir = path.join(deps.config.dataDir, 'verification', loopId);
  await fs.rm(dir, { recursive: true, force: true });
  await git(workspace, ['worktree', 'prune']);
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await git(workspace, ['worktree', 'add', '--detach', '--force', '--quiet', dir, commit]);
  await handOver(deps.sandbox, dir);
  return dir;
}
