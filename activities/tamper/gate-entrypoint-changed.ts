import { minimatch } from 'minimatch';
import { firstChangedLine, quoteLines, type FileChange } from './change-set';
import { jsonKeyLine, sectionText } from './config-text';
import { gateEntrypoints, type GateEntrypoints } from './gate-entrypoints';
import type { TamperCheck, TamperContext, TamperFinding } from './types';

// SPEC §3.4: the maker must not change what a gate runs — its script, the package.json script it
// names, or the config of the tool it invokes. Only files that exist at base count: a new file no
// gate reads changes nothing, while deleting or renaming an entrypoint does.

interface Hit {
  line: number;
  evidence: string;
}

export const gateEntrypointChanged: TamperCheck = async (ctx) => {
  const { input, changes, read } = ctx;
  const basePackage = parseJson(await read(input.baseCommit, 'package.json'));
  const entrypoints = gateEntrypoints(input.workspace, input.gates, objectAt(basePackage, ['scripts']));
  const findings: TamperFinding[] = [];
  for (const change of changes) {
    if (!change.basePath) continue;
    const hits = [
      ...fileHits(change, change.basePath, entrypoints),
      ...(change.basePath === 'package.json' ? await packageHits(ctx, basePackage, entrypoints) : []),
      ...(await sectionHits(ctx, change, change.basePath, entrypoints)),
    ];
    if (!hits.length) continue;
    const file = change.checkpointPath ?? change.basePath;
    findings.push({
      rule: 'GATE_ENTRYPOINT_CHANGED',
      title: 'Verification gate entrypoint changed',
      topic: 'security',
      location: { file, startLine: hits[0]!.line, endLine: hits[0]!.line },
      evidence: hits.map((hit) => hit.evidence).join('\n\n'),
    });
  }
  return findings;
};

function fileHits(change: FileChange, file: string, entrypoints: GateEntrypoints): Hit[] {
  const reason = [...entrypoints.files].find(([glob]) => minimatch(file, glob, { dot: true }))?.[1];
  if (!reason) return [];
  const what = change.checkpointPath
    ? [quoteLines('-', change.removed), quoteLines('+', change.added)].filter(Boolean).join('\n') || `renamed to ${change.checkpointPath}`
    : 'deleted';
  return [{ line: firstChangedLine(change), evidence: `${file}, read by the ${reason}, changed:\n${what}` }];
}

async function packageHits({ input, read }: TamperContext, before: unknown, entrypoints: GateEntrypoints): Promise<Hit[]> {
  const text = await read(input.checkpointCommit, 'package.json');
  const after = parseJson(text);
  const hits: Hit[] = [];
  for (const [key, reason] of entrypoints.packageKeys) {
    const keyPath = packageKeyPath(key);
    const [old, now] = [valueAt(before, keyPath), valueAt(after, keyPath)];
    if (JSON.stringify(old) === JSON.stringify(now)) continue;
    // The key's own line; a removed script points at its parent `scripts` key instead.
    const line = text ? (jsonKeyLine(text, keyPath) ?? jsonKeyLine(text, keyPath.slice(0, 1)) ?? 1) : 1;
    hits.push({ line, evidence: `package.json ${key}, read by the ${reason}, changed: ${shown(old)} → ${shown(now)}` });
  }
  return hits;
}

async function sectionHits({ input, read }: TamperContext, change: FileChange, file: string, entrypoints: GateEntrypoints): Promise<Hit[]> {
  const wanted = [...entrypoints.sections].filter(([key]) => key.startsWith(`${file}#`));
  if (!wanted.length) return [];
  const before = (await read(input.baseCommit, file)) ?? '';
  const after = change.checkpointPath ? ((await read(input.checkpointCommit, change.checkpointPath)) ?? '') : '';
  const hits: Hit[] = [];
  for (const [key, reason] of wanted) {
    const section = key.slice(file.length + 1);
    const [old, now] = [sectionText(before, section), sectionText(after, section)];
    if (old.text === now.text) continue;
    hits.push({ line: now.line ?? 1, evidence: `[${section}] in ${file}, read by the ${reason}, changed to:\n${now.text.slice(0, 1000) || '(removed)'}` });
  }
  return hits;
}

/** `scripts.test:unit` → ['scripts', 'test:unit']; top-level tool keys (`jest`) have no dot. */
function packageKeyPath(key: string): string[] {
  const dot = key.indexOf('.');
  return dot < 0 ? [key] : [key.slice(0, dot), key.slice(dot + 1)];
}

function parseJson(text: string | null): unknown {
  try {
    return text === null ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined; // a package.json that no longer parses has lost every script a gate named
  }
}

function valueAt(json: unknown, keyPath: string[]): unknown {
  return keyPath.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), json);
}

function objectAt(json: unknown, keyPath: string[]): Record<string, unknown> {
  const value = valueAt(json, keyPath);
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

function shown(value: unknown): string {
  return value === undefined ? '(absent)' : JSON.stringify(value).slice(0, 300);
}
