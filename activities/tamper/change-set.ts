import {
  fileChanges,
  pathsAndPatch,
  type CommitReader,
  type FileChange,
  type PathsAndPatch,
} from '../../analysis/tamper/change-set';
import { git, gitBytes, TEXT_DIFF_OPTIONS } from '../git';

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

/**
 * readAt that reads each (commit, file) once: the tamper rules read the same changed files several times.
 * The reads asked for in one turn of the event loop go to git together (readBatch): a sweeping change's
 * check read each changed test file's two versions with a git process apiece.
 */
export function cachedReader(workspace: string): CommitReader {
  const texts = new Map<string, Promise<string | null>>();
  let queued: BatchRead[] = [];
  return (commit, file) => {
    const key = `${commit}\u0000${file}`;
    let text = texts.get(key);
    if (!text) {
      text = new Promise((resolve, reject) => {
        queued.push({ commit, file, resolve, reject });
        if (queued.length > 1) return;
        setImmediate(() => {
          const batch = queued;
          queued = [];
          for (let at = 0; at < batch.length; at += BATCH_SIZE)
            void readBatch(workspace, batch.slice(at, at + BATCH_SIZE));
        });
      });
      texts.set(key, text);
    }
    return text;
  };
}

/** Reads per `git cat-file --batch`: its output (every file's text) is held whole. */
const BATCH_SIZE = 200;

interface BatchRead {
  commit: string;
  file: string;
  resolve: (text: string | null) => void;
  reject: (err: unknown) => void;
}

/**
 * readAt for each of `reads`, in one `git cat-file --batch`: the commits named first (one that does not
 * exist fails its reads, as readAt would), then `<commit>:<file>` for each read. A file the commit lacks
 * reads as null. A name cat-file cannot take on one line, or a path that is no file (a directory, a
 * submodule), and every read of a batch that failed as a whole (its output past the limit), are left to
 * readAt.
 */
async function readBatch(workspace: string, reads: BatchRead[]): Promise<void> {
  const alone = reads.filter((r) => /[\n\r]/.test(r.file));
  const batched = reads.filter((r) => !alone.includes(r));
  const byReadAt = (r: BatchRead) => readAt(workspace, r.commit, r.file).then(r.resolve, r.reject);
  for (const r of alone) void byReadAt(r);
  if (batched.length === 0) return;
  const commits = [...new Set(batched.map((r) => r.commit))];
  const names = [...commits.map((c) => `${c}^{commit}`), ...batched.map((r) => `${r.commit}:${r.file}`)];
  let out: Buffer;
  try {
    out = await gitBytes(workspace, ['cat-file', '--batch'], names.map((n) => `${n}\n`).join(''));
  } catch {
    // Too much output for one process (large files), or git failing: each read on its own, as before.
    for (const r of batched) void byReadAt(r);
    return;
  }
  const answers = catFileAnswers(out, names.length);
  if (answers.length !== names.length) {
    // Output this parser did not follow: nothing is read as absent on its word.
    for (const r of batched) void byReadAt(r);
    return;
  }
  const missingCommits = new Set(commits.filter((_, i) => answers[i]?.type !== 'commit'));
  batched.forEach((r, i) => {
    const answer = answers[commits.length + i]!;
    if (missingCommits.has(r.commit)) void byReadAt(r);
    else if (answer.type === 'missing') r.resolve(null);
    else if (answer.type === 'blob') r.resolve(answer.content.toString('utf8'));
    else void byReadAt(r);
  });
}

/** `git cat-file --batch` output, one answer per name asked: its type (or `missing`) and content. */
function catFileAnswers(out: Buffer, count: number): Array<{ type: string; content: Buffer }> {
  const answers: Array<{ type: string; content: Buffer }> = [];
  let at = 0;
  while (answers.length < count && at < out.length) {
    const end = out.indexOf(0x0a, at);
    if (end < 0) break;
    const header = out.subarray(at, end).toString('utf8');
    at = end + 1;
    const object = /^[0-9a-f]+ (\S+) (\d+)$/.exec(header);
    if (!object) {
      // `<name> missing` (or `ambiguous`): nothing follows it.
      answers.push({ type: 'missing', content: Buffer.alloc(0) });
      continue;
    }
    const size = Number(object[2]);
    answers.push({ type: object[1]!, content: out.subarray(at, at + size) });
    at += size + 1;
  }
  return answers;
}

/** Every file path in a commit. */
export async function listFiles(workspace: string, commit: string): Promise<Set<string>> {
  const listed = await git(workspace, ['ls-tree', '-r', '-z', '--name-only', commit, '--']);
  return new Set(listed.split('\0').filter(Boolean));
}
