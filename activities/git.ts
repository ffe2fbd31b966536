import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';

// Thin wrapper over the git CLI: argv only, bounded in time and output, with a fixed identity.

const GIT_TIMEOUT_MS = 5 * 60_000;
const GIT_IDENTITY = ['-c', 'user.name=Engineering Loop', '-c', 'user.email=loop@engineering-loop.invalid', '-c', 'commit.gpgsign=false'];

export class GitError extends Error {}

export function git(cwd: string, args: string[], maxBuffer = 64 * 1024 * 1024): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...GIT_IDENTITY, ...args],
      { cwd, timeout: GIT_TIMEOUT_MS, maxBuffer, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', GIT_TERMINAL_PROMPT: '0' } },
      (err, stdout, stderr) => {
        if (err) reject(new GitError(`git ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
        else resolve(stdout);
      },
    );
  });
}

export async function headCommit(cwd: string): Promise<string> {
  return (await git(cwd, ['rev-parse', 'HEAD'])).trim();
}

/** Commits everything the maker left in the workspace; returns null when there was nothing to commit. */
export async function commitAll(cwd: string, message: string): Promise<string | null> {
  await git(cwd, ['add', '--all']);
  const staged = await git(cwd, ['diff', '--cached', '--name-only']);
  if (!staged.trim()) return null;
  await git(cwd, ['commit', '--no-verify', '--quiet', '-m', message]);
  return headCommit(cwd);
}

export async function changedFiles(cwd: string, from: string, to: string): Promise<string[]> {
  const out = await git(cwd, ['diff', '--name-only', `${from}..${to}`]);
  return out.split('\n').filter(Boolean);
}

export async function diffText(cwd: string, from: string, to: string): Promise<string> {
  return git(cwd, ['diff', '--no-color', '--no-ext-diff', `${from}..${to}`]);
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Puts the workspace back exactly at `commit`, dropping anything an interrupted maker left behind. */
export async function resetTo(cwd: string, commit: string): Promise<void> {
  await git(cwd, ['reset', '--hard', '--quiet', commit]);
  await git(cwd, ['clean', '-fd', '--quiet']);
}
