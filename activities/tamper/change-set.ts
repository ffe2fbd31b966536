import { git } from '../git';

// The maker's changes between two commits, read with real git: which files changed (with renames
// followed) and exactly which lines were added and removed (`--unified=0`, so no context lines).

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
  added: DiffLine[];
  removed: DiffLine[];
}

/** Which files changed between two commits (renames followed), without their lines. */
export async function changedPaths(workspace: string, base: string, checkpoint: string): Promise<Omit<FileChange, 'added' | 'removed'>[]> {
  return parseNameStatus(await git(workspace, ['diff', '--name-status', '-z', '-M', '--no-ext-diff', `${base}..${checkpoint}`]));
}

export async function loadChanges(workspace: string, base: string, checkpoint: string): Promise<FileChange[]> {
  const range = `${base}..${checkpoint}`;
  const [paths, patch] = await Promise.all([
    changedPaths(workspace, base, checkpoint),
    git(workspace, [
      '-c', 'core.quotePath=false',
      'diff', '--unified=0', '--no-color', '--no-ext-diff', '-M', '--src-prefix=a/', '--dst-prefix=b/', range,
    ]),
  ]);
  const lines = parsePatch(patch);
  return paths.map((change) => {
    const own = lines.get(change.checkpointPath ?? change.basePath ?? '');
    return { ...change, added: own?.added ?? [], removed: own?.removed ?? [] };
  });
}

/** A file's text at a commit, or null when the path does not exist there. */
export async function readAt(workspace: string, commit: string, file: string): Promise<string | null> {
  const listed = await git(workspace, ['ls-tree', '--name-only', commit, '--', `:(literal)${file}`]);
  return listed.trim() ? git(workspace, ['show', `${commit}:${file}`]) : null;
}

/** Every file path in a commit. */
export async function listFiles(workspace: string, commit: string): Promise<Set<string>> {
  const listed = await git(workspace, ['ls-tree', '-r', '-z', '--name-only', commit, '--']);
  return new Set(listed.split('\0').filter(Boolean));
}

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

function parseNameStatus(output: string): Omit<FileChange, 'added' | 'removed'>[] {
  const fields = output.split('\0');
  const changes: Omit<FileChange, 'added' | 'removed'>[] = [];
  for (let i = 0; i + 1 < fields.length; ) {
    const status = fields[i]!.charAt(0);
    if (status === 'R' || status === 'C') {
      // A copy leaves its source untouched, so the copy is simply a new file.
      changes.push({ basePath: status === 'R' ? fields[i + 1]! : null, checkpointPath: fields[i + 2]! });
      i += 3;
    } else {
      const file = fields[i + 1]!;
      changes.push({ basePath: status === 'A' ? null : file, checkpointPath: status === 'D' ? null : file });
      i += 2;
    }
  }
  return changes;
}

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
