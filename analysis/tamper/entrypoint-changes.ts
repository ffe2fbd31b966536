import type { ResolvedGate } from '../../domain/gates';
import type { CommitReader, FileChange } from './change-set';
import { addConfigReferences } from './config-references';
import { isObject, packageKeyPath, parseJson, sectionText, valueAt, type SectionText } from './config-text';
import { entrypointMatcher, gateEntrypoints, type GateEntrypoints } from './gate-entrypoints';
import { addJvmBuildFiles } from './jvm-build-files';

// Which of the maker's changes touch a gate entrypoint, computed from the base commit alone: the one
// answer both the GATE_ENTRYPOINT_CHANGED finding and verification's restore of base versions
// (activities/verification/protected-files.ts) work from. activities/tamper/base-entrypoints.ts lists
// the base commit's files and keeps the answer.

export interface EntrypointCommits {
  workspace: string;
  baseCommit: string;
  checkpointCommit: string;
  /** The commands the gates run, resolved from the base commit. */
  gates: ResolvedGate[];
}

/** A changed file that is an entrypoint: at base (changed, deleted, renamed away) or only at the checkpoint (added). */
export interface EntrypointFile {
  change: FileChange;
  path: string;
  added: boolean;
  reason: string;
}

export interface EntrypointKey {
  /** The package.json: the root's, or a workspace member's (`packages/a/package.json`). */
  file: string;
  /** package.json key path joined with '.', e.g. `scripts.test`. */
  key: string;
  reason: string;
  before: unknown;
  after: unknown;
}

export interface EntrypointSection {
  file: string;
  section: string;
  reason: string;
  before: SectionText;
  after: SectionText;
}

export interface EntrypointChanges {
  files: EntrypointFile[];
  /** Changed package.json keys a gate reads (package.json itself is no file entrypoint). */
  packageKeys: EntrypointKey[];
  /** Changed INI/TOML sections a gate reads. */
  sections: EntrypointSection[];
}

/** Everything the gates read, as the base commit with these `files` defines it. */
export async function gateEntrypointsAt(
  workspace: string,
  gates: ResolvedGate[],
  files: string[],
  readBase: (file: string) => Promise<string | null>,
): Promise<GateEntrypoints> {
  const atBase = new Set(files);
  // Every config read is of a file the listing holds; a path it lacks (absent, or a directory) has no text to read.
  const read = async (file: string) => (atBase.has(file) ? readBase(file) : null);
  const packageJson = parseJson(await read('package.json'));
  const scripts = valueAt(packageJson, ['scripts']);
  const entrypoints = gateEntrypoints(workspace, gates, isObject(scripts) ? scripts : {});
  await addConfigReferences(entrypoints, { files, read, packageJson });
  await addJvmBuildFiles(entrypoints, { files, read, packageJson });
  return entrypoints;
}

/** The `changes` that touch what the base commit's gates read (`entrypoints`). */
export async function entrypointChanges(
  entrypoints: GateEntrypoints,
  commits: Pick<EntrypointCommits, 'baseCommit' | 'checkpointCommit'>,
  changes: FileChange[],
  read: CommitReader,
): Promise<EntrypointChanges> {
  const { baseCommit, checkpointCommit } = commits;
  const texts = async (file: string) => Promise.all([read(baseCommit, file), read(checkpointCommit, file)]);
  const found: EntrypointChanges = { files: [], packageKeys: [], sections: [] };
  const entrypointReason = entrypointMatcher(entrypoints);

  for (const change of changes) {
    const baseReason = change.basePath && entrypointReason(change.basePath);
    if (baseReason) found.files.push({ change, path: change.basePath!, added: false, reason: baseReason });
    // A file renamed or added onto an entrypoint path is new there: no gate read it at base.
    const addedReason =
      change.checkpointPath !== change.basePath && change.checkpointPath && entrypointReason(change.checkpointPath);
    if (addedReason) found.files.push({ change, path: change.checkpointPath!, added: true, reason: addedReason });
  }

  // A member's package.json too: `pnpm -r run test` runs each member's `test`, and jest reads a member's `jest`.
  for (const file of packageFiles(changes)) {
    const [before, after] = (await texts(file)).map(parseJson);
    for (const [key, reason] of entrypoints.packageKeys) {
      const keyPath = packageKeyPath(key);
      const [old, now] = [valueAt(before, keyPath), valueAt(after, keyPath)];
      if (JSON.stringify(old) !== JSON.stringify(now))
        found.packageKeys.push({ file, key, reason, before: old, after: now });
    }
  }

  for (const [key, reason] of entrypoints.sections) {
    const file = key.slice(0, key.indexOf('#'));
    if (!changes.some((change) => touches(change, file))) continue;
    const section = key.slice(file.length + 1);
    const [old, now] = (await texts(file)).map((text) => sectionText(text ?? '', section));
    if (old!.text !== now!.text) found.sections.push({ file, section, reason, before: old!, after: now! });
  }
  return found;
}

/**
 * The package.json files at base that `changes` touch, outside installed packages. A package the change adds
 * brings its own scripts, which only add to what the gates run.
 */
function packageFiles(changes: FileChange[]): string[] {
  const paths = changes.map((change) => change.basePath);
  return [
    ...new Set(
      paths.filter(
        (p): p is string =>
          !!p && (p === 'package.json' || p.endsWith('/package.json')) && !p.split('/').includes('node_modules'),
      ),
    ),
  ].sort();
}

/** Whether `change` adds, changes, deletes or renames `file`. */
export function touches(change: FileChange, file: string): boolean {
  return change.basePath === file || change.checkpointPath === file;
}
