import {
  fileChanges,
  pathsAndPatch,
  type CommitReader,
  type FileChange,
  type PathsAndPatch,
} from '../../analysis/tamper/change-set';
import { git, TEXT_DIFF_OPTIONS } from '../git';

// The maker's changes between two commits, read with real git; analysis/tamper/change-set.ts reads the
// output. One `git diff --raw -p -z` gives both the paths and the patch.

export async function loadChanges(workspace: string, base: string, checkpoint: string): Promise<FileChange[]> {
  const key = `${workspace}\0${base}\0${checkpoint}`;
  let read = recentDiffs.get(key);
  if (!read) {
    // core.quotePath=false: patch headers quote only control characters (patchPath reads them back).
    // --no-textconv: the lines are the file's own, and no driver a repository config names runs.
    read = rawDiff(
      workspace,
      base,
      checkpoint,
      ['--unified=0', '--no-color', '--no-ext-diff', '--no-textconv', '-M', '--src-prefix=a/', '--dst-prefix=b/'],
      ['-c', 'core.quotePath=false'],
    );
    remember(key, read);
  }
  // Parsed for each caller: no two share (and could change) one list.
  return fileChanges(await read);
}

// The checkpoint's tamper check, the verification's entrypoint restore and its frozen tests read the same
// two commits' changes within a second of one another, in one activity: git runs once for them. Commits
// never change, so a remembered diff stays true; only small ones are kept, and only the latest few.
const REMEMBERED_DIFFS = 32;
const REMEMBERED_DIFF_CHARS = 1024 * 1024;
const recentDiffs = new Map<string, Promise<string>>();

function remember(key: string, read: Promise<string>): void {
  recentDiffs.set(key, read);
  if (recentDiffs.size > REMEMBERED_DIFFS) recentDiffs.delete(recentDiffs.keys().next().value!);
  read.then(
    (diff) => {
      if (diff.length > REMEMBERED_DIFF_CHARS) forget(key, read);
    },
    () => forget(key, read),
  );
}

function forget(key: string, read: Promise<string>): void {
  if (recentDiffs.get(key) === read) recentDiffs.delete(key);
}

/** The review's diff: the text `diffText` gives for the same commits, with the paths it covers. */
export async function reviewDiff(workspace: string, base: string, checkpoint: string): Promise<PathsAndPatch> {
  return pathsAndPatch(await rawDiff(workspace, base, checkpoint, TEXT_DIFF_OPTIONS));
}

function rawDiff(
  workspace: string,
  base: string,
  checkpoint: string,
  patchOptions: readonly string[],
  gitConfig: string[] = [],
): Promise<string> {
  const range = `${base}..${checkpoint}`;
  return git(workspace, [...gitConfig, 'diff', '--raw', '-p', '-z', ...patchOptions, '--end-of-options', range, '--']);
}

/**
 * A file's text at a commit, or null when the path does not exist there. Most reads are of files that
 * exist, so `git show` goes first; only when it fails does `ls-tree` tell a missing path from a real failure.
 */
export async function readAt(workspace: string, commit: string, file: string): Promise<string | null> {
  try {
    return await git(workspace, ['show', `${commit}:${file}`]);
  } catch (err) {
    const listed = await git(workspace, ['ls-tree', '--name-only', commit, '--', `:(literal)${file}`]);
    if (listed.trim()) throw err;
    return null;
  }
}

/** readAt that reads each (commit, file) once: the tamper rules read the same changed files several times. */
export function cachedReader(workspace: string): CommitReader {
  const texts = new Map<string, Promise<string | null>>();
  return (commit, file) => {
    const key = `${commit}\u0000${file}`;
    let text = texts.get(key);
    if (!text) texts.set(key, (text = readAt(workspace, commit, file)));
    return text;
  };
}

/** Every file path in a commit. */
export async function listFiles(workspace: string, commit: string): Promise<Set<string>> {
  const listed = await git(workspace, ['ls-tree', '-r', '-z', '--name-only', commit, '--']);
  return new Set(listed.split('\0').filter(Boolean));
}
