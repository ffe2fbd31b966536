import { matchesGlob } from './glob-match';
import { MAX_REVIEW_PARTS } from './review-limits';

// What the review must see (docs/design.md §5.1): the diff of every changed file, in parts when it is too
// large for one prompt. A file may be left out only by a rule the reviewer and the report name — generated
// by the repository's own account (`linguist-generated` in the base commit's .gitattributes, which the
// maker cannot rewrite for its own change) or a package manager's lockfile. Past the operator's ceiling of
// files or bytes the review does not run at all, and the loop escalates REVIEW_INCOMPLETE naming what was
// left unreviewed: a partial review must never look like a complete one.

/** One prompt's worth of diff: the longest text one review call is given. */
export const REVIEW_PART_CHARS = 200_000;

export interface ReviewCeilings {
  /** Changed files the review will take, exclusions aside. */
  maxChangedFiles: number;
  /** Diff bytes (UTF-8) the review will take, exclusions aside. */
  maxDiffBytes: number;
}

export interface FileDiff {
  file: string;
  /** The file's `diff --git` section, sanitised. */
  text: string;
}

export interface Exclusion {
  file: string;
  rule: 'LOCKFILE' | 'LINGUIST_GENERATED';
}

export interface ReviewPart {
  /** The diff text of this part: whole file sections, or one slice of a section too long for a prompt. */
  diff: string;
  files: string[];
}

export type ReviewScope =
  | { kind: 'REVIEWABLE'; parts: ReviewPart[]; excluded: Exclusion[] }
  | { kind: 'TOO_LARGE'; reason: string; unreviewed: UnreviewedSummary; excluded: Exclusion[] };

/** What was not reviewed, small enough for the workflow's history and a person's screen. */
export interface UnreviewedSummary {
  files: number;
  bytes: number;
  /** The largest top-level directories (or root files) by files changed, with their counts. */
  byDirectory: Array<{ directory: string; files: number }>;
}

/** Package managers' lockfiles: generated, and named to the reviewer as dependency changes instead. */
const LOCKFILES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'Cargo.lock',
  'go.sum',
  'poetry.lock',
  'uv.lock',
  'Pipfile.lock',
  'Gemfile.lock',
  'composer.lock',
  'gradle.lockfile',
]);

/**
 * The `linguist-generated` rules of a .gitattributes text, in file order (a later line overrides an
 * earlier one). Patterns follow gitattributes: without a slash a pattern matches a name at any depth.
 */
export function generatedRules(gitattributes: string): Array<{ pattern: string; generated: boolean }> {
  const rules: Array<{ pattern: string; generated: boolean }> = [];
  for (const line of gitattributes.split('\n')) {
    const [pattern, ...attributes] = line.trim().split(/\s+/);
    if (!pattern || pattern.startsWith('#')) continue;
    for (const attribute of attributes) {
      if (attribute === 'linguist-generated' || attribute === 'linguist-generated=true')
        rules.push({ pattern, generated: true });
      else if (
        attribute === '-linguist-generated' ||
        attribute === '!linguist-generated' ||
        attribute === 'linguist-generated=false'
      )
        rules.push({ pattern, generated: false });
    }
  }
  return rules;
}

/** Why `file` is left out of the review, or null when the reviewer must see it. */
export function exclusionOf(file: string, generated: ReturnType<typeof generatedRules>): Exclusion['rule'] | null {
  if (LOCKFILES.has(file.split('/').pop()!)) return 'LOCKFILE';
  let isGenerated = false;
  for (const rule of generated) if (matchesAttributePattern(file, rule.pattern)) isGenerated = rule.generated;
  return isGenerated ? 'LINGUIST_GENERATED' : null;
}

function matchesAttributePattern(file: string, pattern: string): boolean {
  const anchored = pattern.includes('/') && !pattern.endsWith('/');
  const glob = anchored ? pattern.replace(/^\//, '') : `**/${pattern.replace(/\/$/, '')}`;
  return matchesGlob(file, glob, { dot: true });
}

/**
 * Splits the files' diff into parts of at most `partChars`, whole sections where they fit; leaves out
 * what the rules exclude; and refuses (TOO_LARGE) past the ceilings rather than review a part of it.
 */
export function reviewScope(
  files: readonly FileDiff[],
  generated: ReturnType<typeof generatedRules>,
  ceilings: ReviewCeilings,
  partChars = REVIEW_PART_CHARS,
): ReviewScope {
  const excluded: Exclusion[] = [];
  const reviewed: FileDiff[] = [];
  for (const f of files) {
    const rule = exclusionOf(f.file, generated);
    if (rule) excluded.push({ file: f.file, rule });
    else reviewed.push(f);
  }
  const bytes = reviewed.reduce((sum, f) => sum + Buffer.byteLength(f.text), 0);
  const over = [
    reviewed.length > ceilings.maxChangedFiles
      ? `${reviewed.length} changed files exceed the review's ceiling of ${ceilings.maxChangedFiles}`
      : null,
    bytes > ceilings.maxDiffBytes
      ? `a ${bytes}-byte diff exceeds the review's ceiling of ${ceilings.maxDiffBytes} bytes`
      : null,
  ].filter((x): x is string => x !== null);
  if (over.length > 0)
    return {
      kind: 'TOO_LARGE',
      reason: over.join('; '),
      unreviewed: unreviewedSummary(
        reviewed.map((f) => f.file),
        bytes,
      ),
      excluded,
    };
  const parts = packParts(reviewed, partChars);
  // Whole sections per part can leave parts half empty; the review's time bound allows MAX_REVIEW_PARTS.
  if (parts.length > MAX_REVIEW_PARTS)
    return {
      kind: 'TOO_LARGE',
      reason: `the diff needs ${parts.length} review parts, more than the ${MAX_REVIEW_PARTS} one review may take`,
      unreviewed: unreviewedSummary(
        reviewed.map((f) => f.file),
        bytes,
      ),
      excluded,
    };
  return { kind: 'REVIEWABLE', parts, excluded };
}

function packParts(files: FileDiff[], partChars: number): ReviewPart[] {
  const parts: ReviewPart[] = [];
  let current: ReviewPart = { diff: '', files: [] };
  const flush = () => {
    if (current.files.length > 0) parts.push(current);
    current = { diff: '', files: [] };
  };
  for (const f of files) {
    if (f.text.length > partChars) {
      flush();
      for (const slice of slices(f.text, partChars)) parts.push({ diff: slice, files: [f.file] });
      continue;
    }
    if (current.diff.length + f.text.length > partChars) flush();
    current.diff += f.text;
    current.files.push(f.file);
  }
  flush();
  return parts;
}

/** A section too long for one prompt, cut at line ends where one falls in the second half of a slice. */
function slices(text: string, size: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(at + size, text.length);
    if (end < text.length) {
      const lineEnd = text.lastIndexOf('\n', end - 1);
      if (lineEnd > at + size / 2) end = lineEnd + 1;
    }
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

function unreviewedSummary(files: string[], bytes: number): UnreviewedSummary {
  const counts = new Map<string, number>();
  for (const file of files) {
    const slash = file.indexOf('/');
    const directory = slash < 0 ? file : `${file.slice(0, slash)}/`;
    counts.set(directory, (counts.get(directory) ?? 0) + 1);
  }
  const byDirectory = [...counts]
    .map(([directory, n]) => ({ directory, files: n }))
    .sort((a, b) => b.files - a.files || a.directory.localeCompare(b.directory))
    .slice(0, 10);
  return { files: files.length, bytes, byDirectory };
}

/** "100001 files (generated/ 100000, src/ 1)": what was not reviewed, for reasons and the escalation. */
export function describeUnreviewed(u: UnreviewedSummary): string {
  const listed = u.byDirectory.map((d) => `${d.directory} ${d.files}`).join(', ');
  const rest = u.byDirectory.reduce((sum, d) => sum - d.files, u.files);
  return `${u.files} changed file(s), ${u.bytes} bytes of diff (${listed}${rest > 0 ? `, ${rest} more elsewhere` : ''})`;
}
