import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SERVICE_EXCLUDES } from '../domain/setup';
import { gitConfigArgs, gitEnvironment, type RemoteAccess } from './git-isolation';
import { inOrder } from './in-order';
import { killGroup, launch } from './process/launcher';

// Thin wrapper over the git CLI: argv only, bounded in time and output, with a fixed identity and the
// pinned configuration of git-isolation.ts. Revisions follow --end-of-options (or come before `--`), so
// none is read as an option.

const GIT_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;

export class GitError extends Error {}

export function git(cwd: string, args: string[], maxBuffer = DEFAULT_MAX_BUFFER): Promise<string> {
  return runGit(cwd, args, { maxBuffer, timeoutMs: GIT_TIMEOUT_MS });
}

/** git given `stdin`, its output as bytes (`cat-file --batch` frames objects by their byte sizes). */
export function gitBytes(cwd: string, args: string[], stdin: string, maxBuffer = DEFAULT_MAX_BUFFER): Promise<Buffer> {
  return runGitBytes(cwd, args, { maxBuffer, timeoutMs: GIT_TIMEOUT_MS, stdin });
}

/** git with a scratch index file in place of the repository's own (read-tree, checkout-index). */
export function gitWithIndex(cwd: string, indexFile: string, args: string[]): Promise<string> {
  return runGit(cwd, args, { timeoutMs: GIT_TIMEOUT_MS, env: { GIT_INDEX_FILE: indexFile } });
}

/**
 * Brings the service's bare mirror of `url` up to date (a fetch, or a first clone): a second loop on the
 * same repository transfers only what changed. The mirror is the service's alone — no sandbox mounts it.
 * The fetch starts no automatic maintenance: git would run it in the background after the fetch returned,
 * and a local clone copies the mirror's object files one by one while it creates and removes its lock
 * and packs there (a clone failed on a vanished objects/maintenance.lock, once in 5,000 loops). The
 * mirror is kept compact by `gc --auto` in the foreground instead, which does nothing until git's own
 * thresholds (loose objects, packs) are passed; the caller keeps clones from running meanwhile.
 */
export async function updateMirror(cwd: string, url: string, mirror: string, remote: RemoteAccess): Promise<void> {
  await runGit(cwd, ['ls-remote', '--quiet', '--', url, 'HEAD'], {
    remote,
    timeoutMs: remote.connectTimeoutSeconds * 1000,
    timeoutMessage: `the repository did not answer within ${remote.connectTimeoutSeconds}s`,
  });
  const fetched = await fs.stat(path.join(mirror, 'HEAD')).then(
    () =>
      runGit(
        mirror,
        [
          '-c',
          'maintenance.auto=false',
          'fetch',
          '--quiet',
          '--prune',
          '--',
          url,
          '+refs/heads/*:refs/heads/*',
          '+refs/tags/*:refs/tags/*',
        ],
        { remote, timeoutMs: GIT_TIMEOUT_MS },
      ).then(() => true),
    () => false,
  );
  if (fetched) {
    // Upkeep, not the loop's work: a compaction that fails is tried again after the next fetch.
    await runGit(mirror, ['-c', 'gc.autoDetach=false', 'gc', '--auto', '--quiet'], { timeoutMs: GIT_TIMEOUT_MS }).catch(
      () => undefined,
    );
    return;
  }
  await fs.rm(mirror, { recursive: true, force: true });
  // --no-hardlinks: a local source's objects must not share inodes with anything the service later re-owns.
  await runGit(cwd, ['clone', '--quiet', '--mirror', '--no-hardlinks', '--', url, mirror], {
    remote,
    timeoutMs: GIT_TIMEOUT_MS,
  });
}

/** A local, hardlink-free clone of the mirror into a workspace, whose `origin` then names the real URL. */
export async function cloneFromMirror(cwd: string, mirror: string, url: string, dir: string): Promise<void> {
  const local: RemoteAccess = { transport: 'file', connectTimeoutSeconds: 60 };
  await runGit(cwd, ['clone', '--quiet', '--no-checkout', '--no-hardlinks', '--', mirror, dir], {
    remote: local,
    timeoutMs: GIT_TIMEOUT_MS,
  });
  await git(dir, ['remote', 'set-url', 'origin', '--', url]);
}

/**
 * Pushes `commit` to `branch` on `url`. Idempotent: the same commit twice is a no-op. No force: the
 * branch is the loop's own, and a remote branch that moved elsewhere is not overwritten.
 */
export async function pushBranch(
  cwd: string,
  url: string,
  commit: string,
  branch: string,
  remote: RemoteAccess,
): Promise<void> {
  // A local target's receive-pack would run that repository's own hooks (git clears the -c pins for a
  // local child), so it gets the pins itself; a remote server's hooks are that server's business.
  const receivePack =
    remote.transport === 'file'
      ? [`--receive-pack=git -c core.hooksPath=/dev/null -c 'safe.directory=*' receive-pack`]
      : [];
  await runGit(cwd, ['push', '--quiet', '--no-verify', ...receivePack, '--', url, `${commit}:refs/heads/${branch}`], {
    remote,
    timeoutMs: GIT_TIMEOUT_MS,
  });
}

/** The commit `branch` of `url` is at now (fetched into the workspace), or null when `url` has no such branch. */
export async function remoteBranchTip(
  cwd: string,
  url: string,
  branch: string,
  remote: RemoteAccess,
): Promise<string | null> {
  const ref = 'refs/engineering-loop/base-now';
  const found = await runGit(cwd, ['ls-remote', '--heads', '--', url, `refs/heads/${branch}`], {
    remote,
    timeoutMs: remote.connectTimeoutSeconds * 1000,
  });
  const tip = advertisedTip(found, `refs/heads/${branch}`);
  if (tip === null) return null;
  // A tip the workspace already has (most often the base has not moved) needs no fetch.
  if (await hasCommit(cwd, tip)) return tip;
  await runGit(cwd, ['fetch', '--quiet', '--no-tags', '--', url, `+refs/heads/${branch}:${ref}`], {
    remote,
    timeoutMs: GIT_TIMEOUT_MS,
  });
  return (await git(cwd, ['rev-parse', '--verify', `${ref}^{commit}`])).trim();
}

/**
 * The commit `ls-remote` names for exactly `ref` (a pattern also matches refs that merely end in it), or
 * null; an answer that is no object id is no tip.
 */
export function advertisedTip(listing: string, ref: string): string | null {
  for (const line of listing.split('\n')) {
    const [oid, name] = line.split('\t');
    if (name === ref && oid && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(oid)) return oid;
  }
  return null;
}

async function hasCommit(cwd: string, oid: string): Promise<boolean> {
  return git(cwd, ['cat-file', '-e', `${oid}^{commit}`]).then(
    () => true,
    () => false,
  );
}

/** The paths that conflict when `ours` and `theirs` are merged (none: they merge cleanly); no working tree is touched. */
export async function mergeConflicts(cwd: string, ours: string, theirs: string): Promise<string[]> {
  // --write-tree prints the merged tree's id, then, on conflicts (exit 1), the conflicted paths.
  const out = await runGit(cwd, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs], {
    timeoutMs: GIT_TIMEOUT_MS,
    answers: [1],
  });
  return [...new Set(out.split('\0').slice(1).filter(Boolean))];
}

/**
 * The change `checkpoint` makes to the base it shares with `onto`, replayed onto `onto` as one commit: git's
 * merge of the two, no working tree touched (git 2.39's merge-tree cannot replay commit by commit). The
 * conflicting paths instead when it does not merge cleanly.
 */
export async function replayOnto(
  cwd: string,
  onto: string,
  checkpoint: string,
  message: string,
): Promise<{ commit: string; conflicts: [] } | { commit: null; conflicts: string[] }> {
  const out = await runGit(
    cwd,
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', onto, checkpoint],
    {
      timeoutMs: GIT_TIMEOUT_MS,
      answers: [1],
    },
  );
  const [tree, ...paths] = out.split('\0');
  const conflicts = [...new Set(paths.filter(Boolean))];
  if (conflicts.length) return { commit: null, conflicts };
  const commit = await git(cwd, ['commit-tree', '-p', onto, '-m', message, '--end-of-options', tree!.trim()]);
  return { commit: commit.trim(), conflicts: [] };
}

export async function headCommit(cwd: string): Promise<string> {
  return (await headFromFiles(cwd).catch(() => null)) ?? (await git(cwd, ['rev-parse', 'HEAD'])).trim();
}

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * HEAD's commit read from the repository's own files when they are the plain kind — `.git` a directory,
 * HEAD detached or on a branch whose ref is a loose file — as `git rev-parse HEAD` would resolve them,
 * without its process (about 10 ms on a busy worker, on the path to every maker's start). Null for
 * anything else (a packed ref, a worktree's `.git` file, reftable), which git is asked about.
 */
async function headFromFiles(cwd: string): Promise<string | null> {
  const gitDir = path.join(cwd, '.git');
  const head = (await fs.readFile(path.join(gitDir, 'HEAD'), 'utf8')).trim();
  if (OBJECT_ID.test(head)) return head;
  const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
  if (!ref || ref.split('/').some((part) => part === '..' || part === '.')) return null;
  const target = (await fs.readFile(path.join(gitDir, ref), 'utf8')).trim();
  return OBJECT_ID.test(target) ? target : null;
}

/** A checkpoint commit, its parents, and the files it changed against the commit it was made on. */
export interface Checkpoint {
  commit: string;
  parents: string[];
  /** As `git diff --name-only -z <first parent>..<commit>` names them: real paths, never git's quoted forms. */
  changedFiles: string[];
}

/**
 * Commits everything the maker left in the workspace; returns null when there was nothing to commit.
 * What set-up, gates and tools create (SERVICE_EXCLUDES: node_modules, .venv, caches, coverage…) stays
 * out, whether or not the repository ignores it; a maker's own new files, and edits to tracked files
 * anywhere, still go in.
 */
export async function commitAll(cwd: string, message: string): Promise<Checkpoint | null> {
  return (await commitAllThen(cwd, message, () => Promise.resolve()))?.checkpoint ?? null;
}

/**
 * commitAll, then `afterCommit` (reads of the new commit as HEAD) beside the reading of its ids; null,
 * without `afterCommit`, when there was nothing to commit.
 */
export async function commitAllThen<T>(
  cwd: string,
  message: string,
  afterCommit: () => Promise<T>,
): Promise<{ checkpoint: Checkpoint; after: T } | null> {
  await excludeFromCheckpoints(cwd, SERVICE_EXCLUDES);
  await git(cwd, ['add', '--all']);
  try {
    // No auto-maintenance: it would start a second git (`maintenance run --auto`) after every checkpoint.
    await git(cwd, ['-c', 'maintenance.auto=false', 'commit', '--no-verify', '--quiet', '-m', message]);
  } catch (err) {
    // Nothing staged is the one failed commit that is no error: the maker changed nothing.
    if (await nothingStaged(cwd)) return null;
    throw err;
  }
  // Its id, its parent (the HEAD it was made on) and its own changed files — what was staged, named as
  // `git diff --name-only -z <parent>..<commit>` names them — in one call. With -z the header ends in a
  // NUL and each name is NUL-terminated and unquoted, so a name holding a tab, quote or newline is itself.
  const [shown, after] = await inOrder([
    git(cwd, ['show', '--format=%H%n%P', '-z', '--name-only', 'HEAD']),
    afterCommit(),
  ]);
  const headerEnd = shown.indexOf('\0');
  const [commit, parents] = shown.slice(0, headerEnd).split('\n');
  const files = shown
    .slice(headerEnd + 1)
    .replace(/^\n/, '')
    .split('\0');
  return {
    checkpoint: { commit: commit!, parents: parents!.split(' ').filter(Boolean), changedFiles: files.filter(Boolean) },
    after,
  };
}

async function nothingStaged(cwd: string): Promise<boolean> {
  return git(cwd, ['diff', '--cached', '--quiet']).then(
    () => true,
    () => false,
  );
}

/**
 * Adds `patterns` to the workspace's `.git/info/exclude` (once each). It lives in `.git`, which the maker
 * cannot write, and only affects untracked files.
 */
export async function excludeFromCheckpoints(cwd: string, patterns: readonly string[]): Promise<void> {
  const exclude = path.join(cwd, '.git', 'info', 'exclude');
  const current = await fs.readFile(exclude, 'utf8').catch(() => '');
  const present = new Set(current.split('\n'));
  const missing = [...new Set(patterns)].filter((p) => !present.has(p));
  if (missing.length === 0) return;
  await fs.mkdir(path.dirname(exclude), { recursive: true });
  const header = present.has(EXCLUDE_HEADER) ? [] : [EXCLUDE_HEADER];
  await fs.appendFile(
    exclude,
    `${current && !current.endsWith('\n') ? '\n' : ''}${[...header, ...missing].join('\n')}\n`,
  );
}

const EXCLUDE_HEADER = '# engineering-loop: what set-up, gates and tools create never enters a checkpoint';

export async function changedFiles(cwd: string, from: string, to: string): Promise<string[]> {
  const out = await git(cwd, ['diff', '--name-only', '-z', '--end-of-options', `${from}..${to}`, '--']);
  return out.split('\0').filter(Boolean);
}

/** How the full diff is printed, for the maker's diff hash and the reviewer alike. */
export const TEXT_DIFF_OPTIONS: readonly string[] = ['--no-color', '--no-ext-diff', '--no-textconv'];

export async function diffText(cwd: string, from: string, to: string): Promise<string> {
  return git(cwd, ['diff', ...TEXT_DIFF_OPTIONS, '--end-of-options', `${from}..${to}`, '--']);
}

/** Paths in the working tree that git ignores (directories as one entry): never part of a checkpoint. */
export async function ignoredPaths(cwd: string): Promise<string[]> {
  const out = await git(cwd, ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z']);
  return out.split('\0').filter(Boolean);
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Puts the workspace back exactly at `commit`, dropping anything an interrupted maker left behind. */
export async function resetTo(cwd: string, commit: string): Promise<void> {
  // git 2.39's reset reads anything before `--` that looks like an option as one, so it gets a resolved id.
  const resolved = (await git(cwd, ['rev-parse', '--verify', '--end-of-options', `${commit}^{commit}`])).trim();
  await git(cwd, ['reset', '--hard', '--quiet', resolved, '--']);
  await git(cwd, ['clean', '-fd', '--quiet']);
}

interface RunOptions {
  timeoutMs: number;
  /** Exit codes besides 0 that are answers, not failures (`git merge-tree` exits 1 on conflicts). */
  answers?: number[];
  maxBuffer?: number;
  remote?: RemoteAccess;
  timeoutMessage?: string;
  env?: Record<string, string>;
  stdin?: string;
}

async function runGit(cwd: string, args: string[], options: RunOptions): Promise<string> {
  return (await runGitBytes(cwd, args, options)).toString('utf8');
}

async function runGitBytes(cwd: string, args: string[], options: RunOptions): Promise<Buffer> {
  const maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let stdoutBytes = 0;
  let stderrBytes = 0;
  let failure: string | null = null;
  let pid: number | null = null;
  const stop = (reason: string) => {
    failure ??= reason;
    if (pid !== null) killGroup(pid);
  };
  // detached (as launch does): git leads its own process group, so a timeout also ends its helpers
  // (git-remote-https, ssh), which outlive a git that is only sent a signal.
  const child = await launch({
    command: 'git',
    args: [...gitConfigArgs(options.remote), ...args],
    cwd,
    env: { ...gitEnvironment(cwd, options.remote), ...options.env },
    ...(options.stdin !== undefined && { stdin: options.stdin }),
    onStdout: (chunk) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxBuffer) stop(`output exceeded ${maxBuffer} bytes`);
      else stdout.push(chunk);
    },
    onStderr: (chunk) => {
      // Enough of stderr to explain a failure; git can be chatty.
      if (stderrBytes < 64 * 1024) stderr.push(chunk);
      stderrBytes += chunk.length;
    },
  });
  if (child.spawnError) throw new GitError(`git ${args.join(' ')} failed: ${child.spawnError.message}`);
  pid = child.pid;
  // Output may have overflowed before the pid was known.
  if (failure !== null) stop(failure);
  const timer = setTimeout(
    () => stop(options.timeoutMessage ?? `timed out after ${options.timeoutMs / 1000}s`),
    options.timeoutMs,
  );
  const { code, signal } = await child.closed.finally(() => clearTimeout(timer));
  const message = Buffer.concat(stderr).toString('utf8').trim();
  if (failure || (code !== 0 && !(code !== null && options.answers?.includes(code)))) {
    const reason = failure ? [failure, message].filter(Boolean).join(': ') : message || `exit ${code ?? signal}`;
    throw new GitError(`git ${args.join(' ')} failed: ${reason}`);
  }
  return Buffer.concat(stdout);
}
