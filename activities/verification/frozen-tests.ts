import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, gitWithIndex } from '../git';
import { listFiles } from '../tamper/change-set';
import type { ChangedPath } from '../../analysis/tamper/change-set';
import { definesInlineTests, isTestData, isTestFile } from '../../analysis/tamper/test-files';
import { withBaseTestModules } from '../../analysis/verification/rust-test-modules';

// Frozen acceptance tests (docs/design.md §3.4): the repository's tests at the base commit are the
// contract's held-out checks. When the maker edited, deleted or renamed any of them — a test file, the
// data tests read, or the test modules inside a source file — the tests gate also runs with their base
// versions put back on top of the maker's code, in the same clean checkout.

export interface FrozenFiles {
  /** Test files and test data put back whole (base paths). */
  whole: string[];
  /** Source files with inline tests (Rust's `#[cfg(test)] mod tests`): only their test modules are put back. */
  inline: string[];
}

/**
 * Base tests the maker modified, deleted or renamed, of the branch's changes; `readBase` reads a base
 * file, `collected` holds the files the base run's runner named tests in (collected-test-files.ts).
 */
export async function editedBaseTests(
  changes: ChangedPath[],
  readBase: (file: string) => Promise<string | null>,
  collected: ReadonlySet<string> = new Set(),
): Promise<FrozenFiles> {
  const frozen: FrozenFiles = { whole: [], inline: [] };
  // An added or copied file has no base path, so nothing to freeze.
  for (const { basePath, checkpointPath } of changes) {
    if (!basePath) continue;
    if (isTestFile(basePath) || isTestData(basePath) || collected.has(basePath)) frozen.whole.push(basePath);
    else if (definesInlineTests(basePath, (await readBase(basePath)) ?? ''))
      // Moved or deleted, the whole base file goes back: there is no maker's version to keep.
      (checkpointPath === basePath ? frozen.inline : frozen.whole).push(basePath);
  }
  return frozen;
}

/** Every frozen path, whole or inline. */
export function frozenPaths(files: FrozenFiles): string[] {
  return [...files.whole, ...files.inline];
}

/**
 * Runs `run` with the base versions of `files` in the checkout, then puts the checkpoint's versions
 * back (deleting what the checkpoint does not have), so later gates see the maker's commit again; the
 * index stays the checkpoint's throughout. git writes whole files: a symlink the maker left in the way is replaced, never
 * followed; an inline file's spliced text replaces the path the same way (unlinked, then created).
 */
export async function withBaseVersions<T>(
  checkout: string,
  base: string,
  checkpoint: string,
  files: FrozenFiles,
  run: () => Promise<T>,
): Promise<T> {
  const all = frozenPaths(files);
  if (all.length === 0) return run();
  if (files.whole.length) await putVersions(checkout, base, files.whole);
  try {
    for (const file of files.inline) {
      const [baseText, ours] = await Promise.all([show(checkout, base, file), show(checkout, checkpoint, file)]);
      const target = path.join(checkout, file);
      await fs.rm(target, { force: true, recursive: true });
      await fs.writeFile(target, withBaseTestModules(baseText, ours), { flag: 'wx' });
    }
    return await run();
  } finally {
    await putVersions(checkout, checkpoint, all);
    await forgetBytecode(checkout, all);
  }
}

/**
 * Removes Python's cached bytecode of `files`: it is checked against the source's mtime in whole
 * seconds and its size, so a version put back within the second, of the same size, would run the
 * base version's bytecode.
 */
async function forgetBytecode(checkout: string, files: string[]): Promise<void> {
  for (const file of files.filter((f) => f.endsWith('.py'))) {
    const cache = path.join(checkout, path.dirname(file), '__pycache__');
    const stem = `${path.basename(file, '.py')}.`;
    const entries = await fs.readdir(cache).catch(() => [] as string[]);
    for (const entry of entries.filter((e) => e.startsWith(stem) && e.endsWith('.pyc')))
      await fs.rm(path.join(cache, entry), { force: true });
  }
}

function show(checkout: string, commit: string, file: string): Promise<string> {
  return git(checkout, ['show', `${commit}:${file}`]);
}

/** Paths per checkout-index call: well inside the argument list's limit. */
const PATHS_PER_CALL = 1000;

/**
 * Puts `commit`'s versions of `files` in the checkout's working tree, its index left as it is: a path
 * the commit lacks is deleted, the rest are written by git from a scratch index of the commit. Each
 * path is looked up, never matched as a pathspec, so a branch of 100,000 changed paths costs one read
 * of the tree, not a pass over it per path.
 */
async function putVersions(checkout: string, commit: string, files: string[]): Promise<void> {
  const inCommit = await listFiles(checkout, commit);
  await removeInCheckout(
    checkout,
    files.filter((file) => !inCommit.has(file)),
  );
  const present = files.filter((file) => inCommit.has(file));
  if (!present.length) return;
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'loop-index-'));
  try {
    const index = path.join(scratch, 'index');
    await gitWithIndex(checkout, index, ['read-tree', commit]);
    // -f: a file, symlink or directory the maker left in the way is replaced (git never writes through a link).
    for (let i = 0; i < present.length; i += PATHS_PER_CALL)
      await gitWithIndex(checkout, index, ['checkout-index', '-f', '--', ...present.slice(i, i + PATHS_PER_CALL)]);
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** Deletes `files` from the checkout; one under a symbolic link is left alone (it is not in the checkout). */
async function removeInCheckout(checkout: string, files: string[]): Promise<void> {
  const realDir = new Map<string, boolean>();
  const isRealDir = async (dir: string): Promise<boolean> => {
    if (dir === '.') return true;
    let known = realDir.get(dir);
    if (known === undefined) {
      const stat = await fs.lstat(path.join(checkout, dir)).catch(() => null);
      known = !!stat?.isDirectory() && (await isRealDir(path.dirname(dir)));
      realDir.set(dir, known);
    }
    return known;
  };
  for (const file of files)
    if (await isRealDir(path.dirname(file))) await fs.rm(path.join(checkout, file), { force: true, recursive: true });
}
