// The maker's changes between two commits, from the output of one `git diff --raw -p -z`
// (activities/tamper/change-set.ts runs it): which files changed (with renames followed) and exactly
// which lines were added and removed (`--unified=0`, so no context lines). The raw part names each
// file unquoted, and the patch after it is byte for byte what the same diff without `--raw -z` prints.

export interface DiffLine {
  /**
   * Line number in the checkpoint version. A removed line gets the first line that replaced it, or
   * for a pure deletion the line just above the gap (at least 1), so the number always exists.
   */
  line: number;
  text: string;
}

export interface FileChange {
  /** Path at the base commit; null for a file the maker added. */
  basePath: string | null;
  /** Path at the checkpoint commit; null for a file the maker deleted. */
  checkpointPath: string | null;
  /** Set when the checkpoint holds a symbolic link at checkpointPath (git mode 120000). */
  symlink?: true;
  added: DiffLine[];
  removed: DiffLine[];
}

export type ChangedPath = Omit<FileChange, 'added' | 'removed'>;

/** What changed between two commits: the paths (renames followed) and the patch `patchOptions` ask for. */
export interface PathsAndPatch {
  paths: ChangedPath[];
  patch: string;
}

/** The changes a `--raw -p -z --unified=0` diff describes, each with its added and removed lines. */
export function fileChanges(diff: string): FileChange[] {
  const { paths, patch } = pathsAndPatch(diff);
  const lines = parsePatch(patch);
  return paths.map((change) => {
    const own = lines.get(change.checkpointPath ?? change.basePath ?? '');
    return { ...change, added: own?.added ?? [], removed: own?.removed ?? [] };
  });
}

/** Each changed file by the name `git diff --name-only` gives it: its checkpoint path, or its base path when deleted. */
export function changedNames(paths: ChangedPath[]): string[] {
  return paths.map((change) => (change.checkpointPath ?? change.basePath)!);
}

/** A file's text at a commit, or null when the path does not exist there. */
export type CommitReader = (commit: string, file: string) => Promise<string | null>;

/** First checkpoint line the change touches; 1 for deletions and changes without line hunks. */
export function firstChangedLine(change: FileChange): number {
  if (!change.checkpointPath) return 1;
  const lines = [...change.added, ...change.removed].map((l) => l.line);
  return lines.length ? Math.min(...lines) : 1;
}

const QUOTED_LINES = 8;
const QUOTED_WIDTH = 200;

/** Quotes diff lines as `+12: text`, bounded so evidence stays readable. */
export function quoteLines(sign: '+' | '-', lines: DiffLine[]): string {
  const shown = lines.slice(0, QUOTED_LINES).map((l) => `${sign}${l.line}: ${l.text.trim().slice(0, QUOTED_WIDTH)}`);
  if (lines.length > QUOTED_LINES) shown.push(`… and ${lines.length - QUOTED_LINES} more`);
  return shown.join('\n');
}

/**
 * `--raw -z` output (`:<modes> <ids> <status>\0<path>\0[<new path>\0]` per file), then one NUL, then
 * the patch. Read field by field: the patch itself may hold NUL bytes.
 */
export function pathsAndPatch(output: string): PathsAndPatch {
  const paths: ChangedPath[] = [];
  let at = 0;
  const field = () => {
    const end = output.indexOf('\0', at);
    const text = output.slice(at, end < 0 ? output.length : end);
    at = end < 0 ? output.length : end + 1;
    return text;
  };
  while (output.startsWith(':', at)) {
    const [, checkpointMode, , , statusField] = field().split(' ');
    const status = statusField!.charAt(0);
    const link = checkpointMode === SYMLINK_MODE ? { symlink: true as const } : {};
    if (status === 'R' || status === 'C') {
      // A copy leaves its source untouched, so the copy is simply a new file.
      const from = field();
      paths.push({ basePath: status === 'R' ? from : null, checkpointPath: field(), ...link });
    } else {
      const file = field();
      paths.push({ basePath: status === 'A' ? null : file, checkpointPath: status === 'D' ? null : file, ...link });
    }
  }
  if (output.charAt(at) === '\0') at++;
  return { paths, patch: output.slice(at) };
}

const SYMLINK_MODE = '120000';

/** Added/removed lines per file, keyed by checkpoint path (base path for deletions). */
function parsePatch(patch: string): Map<string, { added: DiffLine[]; removed: DiffLine[] }> {
  const files = new Map<string, { added: DiffLine[]; removed: DiffLine[] }>();
  const lines = patch.split('\n');
  let oldPath: string | null = null;
  let current: { added: DiffLine[]; removed: DiffLine[] } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('--- ')) oldPath = patchPath(line.slice(4));
    else if (line.startsWith('+++ ')) {
      const key = patchPath(line.slice(4)) ?? oldPath ?? '';
      current = { added: [], removed: [] };
      files.set(key, current);
    } else if (line.startsWith('@@ ') && current) {
      const hunk = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!hunk) continue;
      // Consume exactly the counted lines: a removed "-- x" line must not read as a file header.
      let toRemove = Number(hunk[1] ?? 1);
      let toAdd = Number(hunk[3] ?? 1);
      let next = Number(hunk[2]);
      const removedAt = Math.max(next, 1);
      while ((toRemove > 0 || toAdd > 0) && i + 1 < lines.length) {
        const body = lines[++i]!;
        if (body.startsWith('-')) {
          current.removed.push({ line: removedAt, text: body.slice(1) });
          toRemove--;
        } else if (body.startsWith('+')) {
          current.added.push({ line: next++, text: body.slice(1) });
          toAdd--;
        }
      }
    }
  }
  return files;
}

/**
 * `a/path`, `b/path` or `/dev/null`. Git ends a name holding a space with a tab, and C-quotes names
 * holding quotes, backslashes or control characters.
 */
function patchPath(header: string): string | null {
  const raw = header.replace(/\t$/, '');
  if (raw === '/dev/null') return null;
  const unquoted = raw.startsWith('"') ? unquoteC(raw.slice(1, -1)) : raw;
  return unquoted.slice(2);
}

// With core.quotePath=false only control characters are octal-escaped, so each escape is one character.
function unquoteC(text: string): string {
  const named: Record<string, string> = { a: '\x07', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r' };
  return text.replace(/\\([0-7]{3}|.)/g, (_, esc: string) =>
    esc.length === 3 ? String.fromCharCode(parseInt(esc, 8)) : (named[esc] ?? esc),
  );
}
