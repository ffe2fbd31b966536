import { BUILD_FILE_VIEWS } from './build-file-views';
import { firstChangedLine, quoteLines, type DiffLine, type FileChange } from './change-set';
import { jsonKeyLine, packageKeyPath } from './config-text';
import {
  entrypointChanges,
  touches,
  type EntrypointFile,
  type EntrypointKey,
  type EntrypointSection,
} from './entrypoint-changes';
import type { TamperCheck, TamperFinding } from './types';

// docs/design.md §3.4: the maker must not change what a gate runs — its script, the package.json script it
// names, the config, setup files and plugins of the tool it invokes, a module it would import — nor
// add one where the gate would now find it (a new conftest.py, jest.config.js, .npmrc, pytest.py).
// Verification runs with the base versions anyway (activities/verification/protected-files.ts); the finding
// tells the reviewer, one per file.

interface Hit {
  line: number;
  evidence: string;
}

export const gateEntrypointChanged: TamperCheck = async ({ input, changes, read, baseEntrypoints }) => {
  const changed = await entrypointChanges(await baseEntrypoints(), input, changes, read);
  const packageTexts = new Map<string, string | null>();
  for (const { file } of changed.packageKeys)
    if (!packageTexts.has(file)) packageTexts.set(file, await read(input.checkpointCommit, file));
  const findings: TamperFinding[] = [];
  for (const change of changes) {
    const hits = [
      ...changed.files.filter((entry) => entry.change === change).map(fileHit),
      ...changed.packageKeys
        .filter((entry) => touches(change, entry.file))
        .map((entry) => packageHit(entry, packageTexts.get(entry.file) ?? null)),
      ...changed.sections.filter((entry) => touches(change, entry.file)).map((entry) => sectionHit(entry, change)),
    ];
    if (!hits.length) continue;
    findings.push({
      rule: 'GATE_ENTRYPOINT_CHANGED',
      title: 'Verification gate entrypoint changed',
      topic: 'security',
      location: { file: change.checkpointPath ?? change.basePath!, startLine: hits[0]!.line, endLine: hits[0]!.line },
      evidence: hits.map((hit) => hit.evidence).join('\n\n'),
    });
  }
  return findings;
};

function fileHit({ change, path, added, reason }: EntrypointFile): Hit {
  const what = added
    ? `added${change.basePath ? ` (renamed from ${change.basePath})` : ''}:\n${quoteLines('+', change.added) || '(no text lines)'}`
    : `changed:\n${changeShown(change)}`;
  return { line: firstChangedLine(change), evidence: `${path}, read by the ${reason}, ${what}` };
}

function changeShown(change: FileChange): string {
  if (!change.checkpointPath) return 'deleted';
  return (
    [quoteLines('-', change.removed), quoteLines('+', change.added)].filter(Boolean).join('\n') ||
    `renamed to ${change.checkpointPath}`
  );
}

function packageHit({ file, key, reason, before, after }: EntrypointKey, text: string | null): Hit {
  const keyPath = packageKeyPath(key);
  // The key's own line; a removed script points at its parent `scripts` key instead.
  const line = text ? (jsonKeyLine(text, keyPath) ?? jsonKeyLine(text, keyPath.slice(0, 1)) ?? 1) : 1;
  return { line, evidence: `${file} ${key}, read by the ${reason}, changed: ${shown(before)} → ${shown(after)}` };
}

function sectionHit({ file, section, reason, before, after }: EntrypointSection, change: FileChange): Hit {
  if (BUILD_FILE_VIEWS[section]) return viewHit(file, section, reason, before.text, after.text, change);
  return {
    line: after.line ?? 1,
    evidence: `[${section}] in ${file}, read by the ${reason}, changed to:\n${after.text.slice(0, 1000) || '(removed)'}`,
  };
}

/**
 * A build file's view changed (build-file-views.ts): the canonical lines it lost and gained, pointing at the
 * first added (else removed) line of the diff that is one of them.
 */
function viewHit(
  file: string,
  section: string,
  reason: string,
  before: string,
  after: string,
  change: FileChange,
): Hit {
  const [removed, added] = [without(before, after), without(after, before)];
  const inView = (lines: string[]) => (l: DiffLine) => {
    const text = l.text.trim();
    return text.length > 0 && lines.some((line) => line === text || (text.length > 3 && line.includes(text)));
  };
  const line =
    change.added.find(inView(added))?.line ?? change.removed.find(inView(removed))?.line ?? firstChangedLine(change);
  const quoted = (sign: string, lines: string[]) =>
    lines
      .slice(0, 8)
      .map((l) => `${sign} ${l.slice(0, 200)}`)
      .concat(lines.length > 8 ? [`… and ${lines.length - 8} more`] : []);
  return {
    line,
    evidence: [
      `${file} (${section}), read by the ${reason}, changed:`,
      ...quoted('-', removed),
      ...quoted('+', added),
    ].join('\n'),
  };
}

/** The lines of `text` that `other` does not have (as many times as they occur). */
function without(text: string, other: string): string[] {
  const left = new Map<string, number>();
  for (const line of other.split('\n')) left.set(line, (left.get(line) ?? 0) + 1);
  return text
    .split('\n')
    .filter(Boolean)
    .filter((line) => {
      const count = left.get(line) ?? 0;
      left.set(line, count - 1);
      return count <= 0;
    });
}

function shown(value: unknown): string {
  return value === undefined ? '(absent)' : JSON.stringify(value).slice(0, 300);
}
