import fs from 'node:fs/promises';
import { runHostTool } from '../process/host-tool';
import type { Sandbox } from './types';

// Under a root service the sandbox runs as an unprivileged uid, which must own the trees it may write.
// The service's own git calls (clone, reset, worktree add) create root-owned files, so each of them is
// followed by a hand-over. chown(1) -R is one process however many files there are, started (like git)
// from the process launcher.

const CHOWN_LIMIT_MS = 5 * 60_000;

export async function handOver(sandbox: Sandbox, ...dirs: string[]): Promise<void> {
  const owner = sandbox.owner;
  if (!owner || dirs.length === 0) return;
  // -h: a symlink the maker made is re-owned itself; its target (possibly outside) is never followed.
  await runTool('chown', ['-R', '-h', `${owner.uid}:${owner.gid}`, '--', ...dirs], dirs);
  // uid-range: each command runs as its own uid of the sandbox group, which must write what others made.
  // chmod never follows symlinks found in the tree (-R without -L); the trees are the service's own paths.
  if (owner.groupWritable) await runTool('chmod', ['-R', 'g+rwX', '--', ...dirs], dirs);
}

function runTool(command: string, args: string[], dirs: string[]): Promise<void> {
  return runHostTool(
    command,
    args,
    CHOWN_LIMIT_MS,
    (reason) => `could not hand ${dirs.join(', ')} to the sandbox user: ${reason}`,
  );
}

/**
 * Hands over directories the service has just made and nothing has written into yet: each one is a
 * single lchown, with no process to spawn (the worker's forks are what an iteration pays for).
 */
export async function handOverNewDirs(sandbox: Sandbox, ...dirs: string[]): Promise<void> {
  const owner = sandbox.owner;
  if (!owner) return;
  for (const dir of dirs) {
    await fs.lchown(dir, owner.uid, owner.gid);
    if (owner.groupWritable) await fs.chmod(dir, ((await fs.lstat(dir)).mode & 0o7777) | 0o070);
  }
}
