import path from 'node:path';
import type { GoalContract } from '../../domain/contract';
import { git } from '../git';
import { changedNames, type ChangedPath } from '../../analysis/tamper/change-set';
import { isTestFile } from '../../analysis/tamper/test-files';
import { readAt } from '../tamper/change-set';
import { acceptanceTestNames } from '../../analysis/verification/proven-criteria';

// The reviewer reads the frozen tests — the base versions of the tests that matter to this change —
// so it can spot code that special-cases them (hard-coded expected values, detecting the test run),
// which no static rule can.

export interface FrozenTestFile {
  file: string;
  text: string;
}

const MAX_FILES = 8;
const MAX_TOTAL_CHARS = 30_000;

/**
 * Base test files the maker edited, that name an acceptance criterion's test, or that mention a source
 * file the maker changed (by its name without extension); edited ones first. `changes` are the branch's
 * (base → checkpoint).
 */
export async function frozenTestsForReview(
  workspace: string,
  base: string,
  changes: ChangedPath[],
  contract: GoalContract,
): Promise<FrozenTestFile[]> {
  const changed = changedNames(changes);
  const testNames = acceptanceTestNames(contract);
  const sourceStems = changed
    .filter((file) => !isTestFile(file))
    .map((file) => path.posix.basename(file).replace(/\.[^.]+$/, ''))
    .filter((stem) => stem.length >= 3);
  // Changed test paths that have a base version (modified or deleted there): an added file, or a
  // rename's new path, has none, so it is not read.
  const edited = changes.flatMap((c) =>
    c.basePath !== null && c.basePath === (c.checkpointPath ?? c.basePath) && isTestFile(c.basePath)
      ? [c.basePath]
      : [],
  );
  // One `git grep` over the base tree finds the rest, instead of reading every test file (base is the
  // service's own commit id; patterns go after -e, so neither can be read as an option).
  const patterns = [...testNames, ...sourceStems];
  const grepped = patterns.length
    ? await git(workspace, ['grep', '-l', '-z', '-F', ...patterns.flatMap((p) => ['-e', p]), base, '--']).catch(
        () => '',
      ) // exit 1: no match
    : '';
  const mentioning = grepped
    .split('\0')
    .map((hit) => hit.slice(base.length + 1))
    .filter((file) => file && isTestFile(file));
  const chosen: FrozenTestFile[] = [];
  let total = 0;
  for (const file of [...new Set([...edited, ...mentioning])]) {
    if (chosen.length >= MAX_FILES || total >= MAX_TOTAL_CHARS) break;
    const text = await readAt(workspace, base, file);
    if (text === null) continue;
    const kept = text.slice(0, MAX_TOTAL_CHARS - total);
    chosen.push({ file, text: kept.length < text.length ? `${kept}\n… (cut)` : kept });
    total += kept.length;
  }
  return chosen;
}
