import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';
import { git } from '../git';
import type { FileChange } from '../../analysis/tamper/change-set';
import { loadChanges } from '../tamper/change-set';
import { isObject, packageKeyPath, parseJson, sectionText, withSectionText } from '../../analysis/tamper/config-text';
import type {
  EntrypointChanges,
  EntrypointCommits,
  EntrypointKey,
  EntrypointSection,
} from '../../analysis/tamper/entrypoint-changes';
import { changedEntrypoints } from '../tamper/base-entrypoints';
import { INSTALL_DIRS } from './verification-checkout';

// Verification runs the gates the repository had, not the ones the maker made (docs/design.md §3.4): in the
// fresh checkout of the checkpoint, every gate entrypoint the maker changed, deleted or added goes back
// to its base state. Which files those are comes from the same computation as the
// GATE_ENTRYPOINT_CHANGED finding (analysis/tamper/gate-entrypoint-changed.ts), which still tells the reviewer.

/**
 * Puts the base versions of the gates' entrypoints into `checkout`, a fresh worktree of `checkpointCommit`
 * made from `workspace`, before set-up and gates run there. Whole files are restored or removed by git;
 * in package.json only the keys a gate reads, and in a shared INI/TOML file only the sections it reads,
 * go back, so the maker's dependencies stay. Returns what was put back: paths, `package.json#scripts.test` for a key,
 * `pyproject.toml#tool.pytest` for a section.
 */
export async function restoreGateEntrypoints(
  workspace: string,
  checkout: string,
  baseCommit: string,
  checkpointCommit: string,
  gates: ResolvedGate[],
): Promise<string[]> {
  const changes = await loadChanges(workspace, baseCommit, checkpointCommit);
  return restoreInCheckout(
    checkout,
    baseCommit,
    await entrypointsToRestore({ workspace, baseCommit, checkpointCommit, gates }, changes),
  );
}

/**
 * The gate entrypoints `changes` (base → checkpoint) touched; null when nothing changed. Read from the
 * workspace alone, so it can be worked out while the checkout is being made.
 */
export async function entrypointsToRestore(
  commits: EntrypointCommits,
  changes: FileChange[],
): Promise<EntrypointChanges | null> {
  return changes.length ? changedEntrypoints(commits, changes) : null;
}

/** restoreGateEntrypoints' second half: puts back in `checkout` what entrypointsToRestore found. */
export async function restoreInCheckout(
  checkout: string,
  baseCommit: string,
  changed: EntrypointChanges | null,
): Promise<string[]> {
  if (!changed) return [];
  // freshVerificationCheckout removes install dirs wholesale; restoring a base file inside would revive part of one.
  const whole = new Set(
    changed.files.map((file) => file.path).filter((file) => !file.split('/').some((part) => INSTALL_DIRS.has(part))),
  );
  const restored: string[] = [];

  for (const file of new Set(changed.packageKeys.map((entry) => entry.file))) {
    const keys = changed.packageKeys.filter((entry) => entry.file === file);
    if (await restorePackageKeys(checkout, file, keys)) restored.push(...keys.map(({ key }) => `${file}#${key}`));
    else whole.add(file);
  }
  for (const file of new Set(changed.sections.map((entry) => entry.file))) {
    if (whole.has(file)) continue;
    const sections = changed.sections.filter((entry) => entry.file === file);
    const outcome = await restoreSections(checkout, file, sections);
    if (outcome === 'restored') restored.push(...sections.map(({ section }) => `${file}#${section}`));
    else if (outcome === 'not a file') whole.add(file);
  }

  if (whole.size) {
    // git writes the base version (or removes a file base lacks), replacing a symlink or directory the
    // maker left at the path, or on the way to it, instead of writing through it.
    const paths = [...whole].sort();
    await git(checkout, [
      'restore',
      `--source=${baseCommit}`,
      '--worktree',
      '--',
      ...paths.map((file) => `:(literal)${file}`),
    ]);
    for (const file of paths) await adoptOwnership(checkout, file);
    restored.unshift(...paths);
  }
  return restored;
}

/** Sets the gate-read keys of one of the checkout's package.json files to their base values; false when it is not a JSON object file. */
async function restorePackageKeys(checkout: string, file: string, keys: EntrypointKey[]): Promise<boolean> {
  const text = await readOwnFile(checkout, file);
  const json = parseJson(text);
  if (text === null || !isObject(json)) return false;
  for (const { key, before } of keys) {
    const [top, inner] = packageKeyPath(key) as [string, string | undefined];
    if (inner === undefined) setOrDelete(json, top, before);
    else {
      if (!isObject(json[top])) json[top] = {};
      setOrDelete(json[top] as Record<string, unknown>, inner, before);
    }
  }
  const indent = /^([ \t]+)"/m.exec(text)?.[1] ?? 2;
  await writeOwnFile(checkout, file, `${JSON.stringify(json, null, indent)}${text.endsWith('\n') ? '\n' : ''}`);
  return true;
}

function setOrDelete(object: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) delete object[key];
  else object[key] = value;
}

/**
 * Replaces the gate-read sections of a shared INI/TOML file with their base text. Only kept when reading
 * the result back gives exactly the base sections; otherwise (a header hidden in a multi-line string,
 * say) the file is left as the maker wrote it and the GATE_ENTRYPOINT_CHANGED finding still blocks.
 * Keys set outside the section headers (TOML dotted keys under `[tool]`, inline tables) are neither
 * seen nor restored. A path that is not a plain file is restored whole.
 */
async function restoreSections(
  checkout: string,
  file: string,
  sections: EntrypointSection[],
): Promise<'restored' | 'left' | 'not a file'> {
  const text = await readOwnFile(checkout, file);
  if (text === null) return 'not a file';
  const next = sections.reduce((current, { section, before }) => withSectionText(current, section, before.text), text);
  if (sections.some(({ section, before }) => sectionText(next, section).text !== before.text)) return 'left';
  await writeOwnFile(checkout, file, next);
  return 'restored';
}

/** The text of a regular file in the checkout reached through real directories only, else null. */
async function readOwnFile(checkout: string, file: string): Promise<string | null> {
  let at = checkout;
  const parts = file.split('/');
  for (const [index, part] of parts.entries()) {
    if (!part || part === '.' || part === '..') return null;
    at = path.join(at, part);
    const stat = await fs.lstat(at).catch(() => null);
    const last = index === parts.length - 1;
    if (!stat || (last ? !stat.isFile() : !stat.isDirectory())) return null;
  }
  return fs.readFile(at, 'utf8');
}

/** Rewrites a file readOwnFile just read, in place (same inode, so same owner), never through a symlink. */
async function writeOwnFile(checkout: string, file: string, text: string): Promise<void> {
  const handle = await fs.open(
    path.join(checkout, file),
    constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW,
  );
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

/**
 * Gives what git just created on the way to `file` (directories, the file) its directory's owner: the
 * checkout belongs to the sandbox uid (hand-over.ts) while the service's git runs as root. Only entries
 * the service owns are changed, and a symlink is re-owned itself (lchown), never followed.
 */
async function adoptOwnership(checkout: string, file: string): Promise<void> {
  let owner = await fs.lstat(checkout);
  let at = checkout;
  for (const part of file.split('/')) {
    at = path.join(at, part);
    const stat = await fs.lstat(at).catch(() => null);
    if (!stat) return; // removed, or never there
    const differs = stat.uid !== owner.uid || stat.gid !== owner.gid;
    if (differs && stat.uid === process.getuid?.()) await fs.lchown(at, owner.uid, owner.gid);
    else owner = stat;
    if (!stat.isDirectory()) return;
  }
}
