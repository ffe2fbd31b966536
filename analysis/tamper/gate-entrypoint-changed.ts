import { firstChangedLine, quoteLines, type FileChange } from './change-set';
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
  const packageText = changed.packageKeys.length ? await read(input.checkpointCommit, 'package.json') : null;
  const findings: TamperFinding[] = [];
  for (const change of changes) {
    const hits = [
      ...changed.files.filter((entry) => entry.change === change).map(fileHit),
      ...(touches(change, 'package.json') ? changed.packageKeys.map((key) => packageHit(key, packageText)) : []),
      ...changed.sections.filter((entry) => touches(change, entry.file)).map(sectionHit),
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

function packageHit({ key, reason, before, after }: EntrypointKey, text: string | null): Hit {
  const keyPath = packageKeyPath(key);
  // The key's own line; a removed script points at its parent `scripts` key instead.
  const line = text ? (jsonKeyLine(text, keyPath) ?? jsonKeyLine(text, keyPath.slice(0, 1)) ?? 1) : 1;
  return { line, evidence: `package.json ${key}, read by the ${reason}, changed: ${shown(before)} → ${shown(after)}` };
}

function sectionHit({ file, section, reason, after }: EntrypointSection): Hit {
  return {
    line: after.line ?? 1,
    evidence: `[${section}] in ${file}, read by the ${reason}, changed to:\n${after.text.slice(0, 1000) || '(removed)'}`,
  };
}

function shown(value: unknown): string {
  return value === undefined ? '(absent)' : JSON.stringify(value).slice(0, 300);
}
