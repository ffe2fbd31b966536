import fs from 'node:fs/promises';
import path from 'node:path';
import { git } from '../git';
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

/** Base tests the maker modified, deleted or renamed, of the branch's changes; `readBase` reads a base file. */
export async function editedBaseTests(
  changes: ChangedPath[],
  readBase: (file: string) => Promise<string | null>,
): Promise<FrozenFiles> {
  const frozen: FrozenFiles = { whole: [], inline: [] };
  // An added or copied file has no base path, so nothing to freeze.
  for (const { basePath, checkpointPath } of changes) {
    if (!basePath) continue;
    if (isTestFile(basePath) || isTestData(basePath)) frozen.whole.push(basePath);
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
 * back (deleting what the checkpoint does not have), index included, so later gates see the maker's
 * commit again. git writes whole files: a symlink the maker left in the way is replaced, never
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
  if (files.whole.length) await restoreFrom(checkout, base, files.whole);
  try {
    for (const file of files.inline) {
      const [baseText, ours] = await Promise.all([show(checkout, base, file), show(checkout, checkpoint, file)]);
      const target = path.join(checkout, file);
      await fs.rm(target, { force: true, recursive: true });
      await fs.writeFile(target, withBaseTestModules(baseText, ours), { flag: 'wx' });
    }
    return await run();
  } finally {
    // A path the checkpoint does not have is removed: restore matches the source.
    await restoreFrom(checkout, checkpoint, all);
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

function restoreFrom(checkout: string, commit: string, files: string[]): Promise<string> {
  return git(checkout, [
    'restore',
    `--source=${commit}`,
    '--staged',
    '--worktree',
    '--',
    ...files.map((file) => `:(literal)${file}`),
  ]);
}
