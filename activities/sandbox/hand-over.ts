import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import type { Sandbox } from './sandbox';

// Under a root service the sandbox runs as an unprivileged uid, which must own the trees it may write.
// The service's own git calls (clone, reset, worktree add) create root-owned files, so each of them is
// followed by a hand-over. chown(1) -R is one process however many files there are.

export function handOver(sandbox: Sandbox, ...dirs: string[]): Promise<void> {
  const owner = sandbox.owner;
  if (!owner || dirs.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    // -h: a symlink the maker made is re-owned itself; its target (possibly outside) is never followed.
    execFile('chown', ['-R', '-h', `${owner.uid}:${owner.gid}`, '--', ...dirs], { timeout: 5 * 60_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`could not hand ${dirs.join(', ')} to the sandbox user: ${stderr.trim() || err.message}`));
      else resolve();
    });
  });
}

/**
 * Hands over directories the service has just made and nothing has written into yet: each one is a
 * single lchown, with no process to spawn (the worker's forks are what an iteration pays for).
 */
export async function handOverNewDirs(sandbox: Sandbox, ...dirs: string[]): Promise<void> {
  const owner = sandbox.owner;
  if (!owner) return;
  for (const dir of dirs) await fs.lchown(dir, owner.uid, owner.gid);
}
