import fs from 'node:fs/promises';
import { killGroup, launch } from '../process/launcher';
import type { Sandbox } from './types';

// Under a root service the sandbox runs as an unprivileged uid, which must own the trees it may write.
// The service's own git calls (clone, reset, worktree add) create root-owned files, so each of them is
// followed by a hand-over. chown(1) -R is one process however many files there are, started (like git)
// from the process launcher.

const CHOWN_LIMIT_MS = 5 * 60_000;

export async function handOver(sandbox: Sandbox, ...dirs: string[]): Promise<void> {
  const owner = sandbox.owner;
  if (!owner || dirs.length === 0) return;
  const stderr: Buffer[] = [];
  // -h: a symlink the maker made is re-owned itself; its target (possibly outside) is never followed.
  const chown = await launch({
    command: 'chown',
    args: ['-R', '-h', `${owner.uid}:${owner.gid}`, '--', ...dirs],
    cwd: '/',
    env: { PATH: process.env.PATH },
    onStdout: () => undefined,
    onStderr: (chunk) => stderr.push(chunk),
  });
  const pid = chown.pid;
  const timer = pid === null ? undefined : setTimeout(() => killGroup(pid), CHOWN_LIMIT_MS);
  const exit = chown.spawnError ? null : await chown.closed.finally(() => clearTimeout(timer));
  if (exit?.code === 0) return;
  const reason =
    Buffer.concat(stderr).toString('utf8').trim() || chown.spawnError?.message || `exit ${exit?.code ?? exit?.signal}`;
  throw new Error(`could not hand ${dirs.join(', ')} to the sandbox user: ${reason}`);
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
