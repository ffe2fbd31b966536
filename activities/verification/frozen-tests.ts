import { git } from '../git';
import type { ChangedPath } from '../../analysis/tamper/change-set';
import { isTestFile } from '../../analysis/tamper/test-files';

// Frozen acceptance tests (docs/design.md §3.4): the repository's test files at the base commit are the
// contract's held-out checks. When the maker edited, deleted or renamed any of them, the tests gate
// also runs with their base versions put back on top of the maker's code, in the same clean checkout.

/** Test files at base that the maker modified, deleted or renamed (their base paths), of the branch's changes. */
export function editedBaseTestFiles(changes: ChangedPath[]): string[] {
  // An added or copied file has no base path, so nothing to freeze.
  return changes.flatMap((c) => (c.basePath && isTestFile(c.basePath) ? [c.basePath] : []));
}

/**
 * Runs `run` with the base versions of `files` in the checkout, then puts the checkpoint's versions
 * back (deleting what the checkpoint does not have), index included, so later gates see the maker's
 * commit again. git writes the files: a symlink the maker left in the way is replaced, never followed.
 */
export async function withBaseVersions<T>(
  checkout: string,
  base: string,
  checkpoint: string,
  files: string[],
  run: () => Promise<T>,
): Promise<T> {
  await restoreFrom(checkout, base, files);
  try {
    return await run();
  } finally {
    // A path the checkpoint does not have is removed: restore matches the source.
    await restoreFrom(checkout, checkpoint, files);
  }
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
