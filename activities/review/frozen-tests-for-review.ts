import path from 'node:path';
import type { GoalContract } from '../../domain/contract';
import { git } from '../git';
import { isTestFile } from '../tamper/test-files';

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
 * file the maker changed (by its name without extension); edited ones first.
 */
export async function frozenTestsForReview(workspace: string, base: string, changed: string[], contract: GoalContract): Promise<FrozenTestFile[]> {
  const listed = (await git(workspace, ['ls-tree', '-r', '-z', '--name-only', '--end-of-options', base])).split('\0');
  const tests = listed.filter((file) => file && isTestFile(file));
  const testNames = contract.acceptanceCriteria.flatMap((ac) => (ac.verification.type === 'test' ? [ac.verification.name] : []));
  const sourceStems = changed.filter((file) => !isTestFile(file)).map((file) => path.posix.basename(file).replace(/\.[^.]+$/, '')).filter((stem) => stem.length >= 3);
  const edited = tests.filter((file) => changed.includes(file));
  const chosen: FrozenTestFile[] = [];
  let total = 0;
  for (const file of [...edited, ...tests.filter((file) => !edited.includes(file))]) {
    if (chosen.length >= MAX_FILES || total >= MAX_TOTAL_CHARS) break;
    const text = await git(workspace, ['show', `${base}:${file}`]);
    const relevant = edited.includes(file) || testNames.some((name) => text.includes(name)) || sourceStems.some((stem) => text.includes(stem));
    if (!relevant) continue;
    const kept = text.slice(0, MAX_TOTAL_CHARS - total);
    chosen.push({ file, text: kept.length < text.length ? `${kept}\n… (cut)` : kept });
    total += kept.length;
  }
  return chosen;
}
