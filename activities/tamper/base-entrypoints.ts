import type { ResolvedGate } from '../../domain/gates';
import type { CommitReader, FileChange } from '../../analysis/tamper/change-set';
import {
  entrypointChanges,
  gateEntrypointsAt,
  type EntrypointChanges,
  type EntrypointCommits,
} from '../../analysis/tamper/entrypoint-changes';
import type { GateEntrypoints } from '../../analysis/tamper/gate-entrypoints';
import { git } from '../git';
import { KeptPromises } from '../kept-promises';
import { cachedReader } from './change-set';

// What the base commit's gates read, from its files in git (analysis/tamper/entrypoint-changes.ts
// decides which they are), and which of the maker's changes touch it.

/**
 * Everything the gates read, as the base commit defines it. A commit's files never change, so the answer
 * for the same workspace, base and gates is kept (the last BASE_ENTRYPOINTS_CACHE_SIZE): the maker's
 * check and the verification of every iteration ask for it again. Each caller gets its own copy.
 */
export async function baseGateEntrypoints(
  workspace: string,
  baseCommit: string,
  gates: ResolvedGate[],
  readText: CommitReader = cachedReader(workspace),
): Promise<GateEntrypoints> {
  const found = baseEntrypoints.get(JSON.stringify([workspace, baseCommit, gates]), () =>
    readBaseGateEntrypoints(workspace, baseCommit, gates, readText),
  );
  return structuredClone(await found);
}

export const BASE_ENTRYPOINTS_CACHE_SIZE = 50;

const baseEntrypoints = new KeptPromises<GateEntrypoints>(BASE_ENTRYPOINTS_CACHE_SIZE);

async function readBaseGateEntrypoints(
  workspace: string,
  baseCommit: string,
  gates: ResolvedGate[],
  readText: CommitReader,
): Promise<GateEntrypoints> {
  const listed = await git(workspace, [
    'ls-tree',
    '-r',
    '-z',
    '--name-only',
    '--full-tree',
    '--end-of-options',
    baseCommit,
  ]);
  return gateEntrypointsAt(workspace, gates, listed.split('\0').filter(Boolean), (file) => readText(baseCommit, file));
}

/** The maker's `changes` that touch a gate entrypoint of the base commit. */
export async function changedEntrypoints(
  commits: EntrypointCommits,
  changes: FileChange[],
  read: CommitReader = cachedReader(commits.workspace),
): Promise<EntrypointChanges> {
  const entrypoints = await baseGateEntrypoints(commits.workspace, commits.baseCommit, commits.gates, read);
  return entrypointChanges(entrypoints, commits, changes, read);
}
