import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivityDeps } from '../deps';
import { git } from '../git';
import { handOver } from '../sandbox/hand-over';
import { removeTree } from '../sandbox/mounts';
import { detachSnapshots } from '../setup/dependency-snapshots';
import { early } from '../in-order';
import { listFiles } from '../tamper/change-set';

/**
 * A clean checkout of exactly `commit`, made afresh for every verification (docs/design.md §10.10):
 * files the maker left untracked, ignored or excluded in its workspace never reach a gate, and nothing a
 * previous gate run wrote survives. A detached worktree of the loop's repository: no clone, and tools
 * that ask git questions still can (its .git is mounted read-only into the gate's sandbox).
 */
export async function freshVerificationCheckout(
  deps: ActivityDeps,
  loopId: string,
  workspace: string,
  commit: string,
): Promise<string> {
  // The commit's file list (what the checkout's index will hold) is read beside the checkout itself.
  const tracked = early(listFiles(workspace, commit));
  const dir = await checkoutAt(deps, loopId, workspace, commit);
  return readyForGates(deps, dir, await tracked);
}

/**
 * The loop's checkout at `commit`, not yet ready for a gate: the maker's activity makes it at the
 * iteration's start commit while its agent works, then moves it to the checkpoint (movedCheckout), so
 * only the files the agent changed are written once the checkpoint exists. The agent cannot reach it
 * (it is outside its workspace) nor the repository's .git, which its sandbox mounts read-only.
 */
export async function checkoutAt(
  deps: ActivityDeps,
  loopId: string,
  workspace: string,
  commit: string,
): Promise<string> {
  const dir = checkoutDir(deps, loopId);
  await discardVerificationCheckout(deps, loopId);
  await fs.mkdir(path.dirname(dir), { recursive: true });
  // --force also replaces the previous verification's registration of this path (missing now) — no prune needed.
  await git(workspace, ['worktree', 'add', '--detach', '--force', '--quiet', dir, commit]);
  return dir;
}

/** A checkout made by checkoutAt (no gate has run in it), moved to `commit` and made ready for the gates. */
export async function movedCheckout(
  deps: ActivityDeps,
  workspace: string,
  dir: string,
  commit: string,
): Promise<string> {
  const tracked = early(listFiles(workspace, commit));
  // --force: the tree becomes exactly the commit's, whatever git would otherwise keep of the start's.
  await git(dir, ['checkout', '--detach', '--force', '--quiet', commit]);
  return readyForGates(deps, dir, await tracked);
}

/** Without the installs the commit carries, and owned by the sandbox's user. */
async function readyForGates(deps: ActivityDeps, dir: string, tracked: Iterable<string>): Promise<string> {
  await removeCommittedInstalls(dir, tracked);
  await handOver(deps.sandbox, dir);
  return dir;
}

/**
 * Removes the loop's verification checkout (the maker's activity does, while its maker works: it can be
 * large). It is first renamed aside: an earlier attempt of the activity that Temporal already gave up on
 * (a heartbeat timeout) may still be writing into it, and then goes on writing into the renamed tree,
 * never into the next checkout; removing that tree may fail while it writes, which leaves it for later.
 */
export async function discardVerificationCheckout(deps: ActivityDeps, loopId: string): Promise<void> {
  const dir = checkoutDir(deps, loopId);
  const aside = `${dir}.discarded-${randomUUID()}`;
  // Its dependency snapshots' overlays first (a worker that crashed may have left them): removing through
  // one would delete through it.
  await detachSnapshots(dir);
  try {
    await fs.rename(dir, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  // An earlier attempt may have mounted one meanwhile; the mount moved with the tree.
  await removeTree(aside).catch(() => undefined);
}

function checkoutDir(deps: ActivityDeps, loopId: string): string {
  return path.join(deps.config.dataDir, 'verification', loopId);
}

/** What set-up installs (node_modules, a venv); a committed copy could carry a fake test runner past it. */
export const INSTALL_DIRS = new Set(['node_modules', '.venv', 'venv']);

/**
 * Removes installed-dependency directories the checkpoint itself carries (a `.gitignore` negation lets a
 * maker commit them): `npm install` or `pip install` would keep a planted package whose version matches.
 */
async function removeCommittedInstalls(checkout: string, tracked: Iterable<string>): Promise<void> {
  const roots = new Set<string>();
  for (const file of tracked) {
    const parts = file.split('/');
    const at = parts.findIndex((part) => INSTALL_DIRS.has(part));
    if (at >= 0) roots.add(parts.slice(0, at + 1).join('/'));
  }
  for (const root of roots) await fs.rm(path.join(checkout, root), { recursive: true, force: true });
}
