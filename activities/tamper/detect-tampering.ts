import { inventoryReader } from '../../analysis/tamper/syntax-inventories';
import type { AcceptanceTestSource } from '../../analysis/tamper/special-cased-values';
import { tamperFindings } from '../../analysis/tamper/tamper-rules';
import { definesInlineTests, isTestFile, testFilesAmong } from '../../analysis/tamper/test-files';
import type { TamperFinding, TamperInput } from '../../analysis/tamper/types';
import { testTitle } from '../../analysis/verification/proven-criteria';
import { git } from '../git';
import { early } from '../in-order';
import { baseGateEntrypoints } from './base-entrypoints';
import { cachedReader, listFiles, loadChanges } from './change-set';
import { pythonInventories } from './python-syntax';

// The tamper rules (analysis/tamper/tamper-rules.ts, docs/design.md §3.4) over real git: the maker's
// changes, each file read once, Python parsed by python3.

export async function detectTampering(input: TamperInput): Promise<TamperFinding[]> {
  const read = cachedReader(input.workspace);
  const baseEntrypoints = () => baseGateEntrypoints(input.workspace, input.baseCommit, input.gates, read);
  // What the base's gates read does not depend on the change: read beside the diff (the gate entrypoint
  // rule then gets it from baseGateEntrypoints' cache, even while still being read).
  void early(baseEntrypoints());
  const changes = await loadChanges(input.workspace, input.baseCommit, input.checkpointCommit);
  if (!changes.length) return [];
  const isTest = await testFilesAmong(
    changes.flatMap((c) => [
      ...(c.basePath ? [{ commit: input.baseCommit, file: c.basePath }] : []),
      ...(c.checkpointPath ? [{ commit: input.checkpointCommit, file: c.checkpointPath }] : []),
    ]),
    read,
    input.collectedTests,
  );
  // The rules read the changed tests one after another: asked for together, they are read by a few git
  // processes (cachedReader), not two apiece.
  for (const { basePath, checkpointPath } of changes) {
    if (basePath && isTest(basePath)) void early(read(input.baseCommit, basePath));
    if (checkpointPath && isTest(checkpointPath)) void early(read(input.checkpointCommit, checkpointPath));
  }
  return tamperFindings({
    input,
    changes,
    read,
    isTest,
    inventory: inventoryReader(input, changes, { read, isTest }, pythonInventories),
    checkpointFiles: () => listFiles(input.workspace, input.checkpointCommit),
    baseEntrypoints,
    acceptanceTests: () => baseTestsDeclaring(input, read),
  });
}

/**
 * The base test files that mention each acceptance test's name, found with one `git grep` over the base
 * tree (the names go after -e, so none is read as an option); the rule then finds the declaration.
 */
async function baseTestsDeclaring(
  input: TamperInput,
  read: (commit: string, file: string) => Promise<string | null>,
): Promise<AcceptanceTestSource[]> {
  const names = input.acceptanceTests ?? [];
  const titles = names.map(testTitle).filter(Boolean);
  if (!titles.length) return [];
  const listed = await git(input.workspace, [
    'grep',
    '-l',
    '-z',
    '-F',
    ...titles.flatMap((t) => ['-e', t]),
    input.baseCommit,
    '--',
  ]).catch(() => ''); // exit 1: no match
  const sources: AcceptanceTestSource[] = [];
  for (const hit of listed.split('\0').filter(Boolean)) {
    const file = hit.slice(input.baseCommit.length + 1);
    const text = await read(input.baseCommit, file);
    const collected = input.collectedTests?.includes(file);
    if (text === null || !(isTestFile(file) || collected || definesInlineTests(file, text))) continue;
    names.forEach((name, i) => {
      if (text.includes(titles[i]!)) sources.push({ name, file, text });
    });
  }
  return sources;
}
