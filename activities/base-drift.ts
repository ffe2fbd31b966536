import { git, GitError, mergeConflicts, remoteBranchTip } from './git';
import type { RemoteAccess } from './git-isolation';
import type { BaseDrift } from '../domain/base-drift';

// Base drift (docs/design.md §9): a loop works from the base commit its baseRef named when it started.
// By delivery the branch may have moved on — other merges landed meanwhile — and the delivered change,
// verified on the old base, may no longer merge. Delivery looks again: how far the base moved, and
// whether the change still merges onto it (git's merge-tree, no working tree touched). The report and
// the pull request say so (domain/base-drift.ts); nothing is rebased behind anyone's back.

export async function baseDrift(
  workspace: string,
  target: { url: string; baseRef: string; remote: RemoteAccess },
  baseCommit: string,
  checkpoint: string,
): Promise<BaseDrift> {
  const drift: BaseDrift = {
    baseRef: target.baseRef,
    baseCommit,
    currentCommit: null,
    behind: 0,
    conflicts: null,
    problem: null,
  };
  try {
    const now = await remoteBranchTip(workspace, target.url, target.baseRef, target.remote);
    // A tag or a commit id does not move.
    if (now === null) return { ...drift, currentCommit: baseCommit, conflicts: [] };
    // Not moved (the common case): no git process to count what is known to be nothing.
    const behind =
      now === baseCommit ? 0 : Number((await git(workspace, ['rev-list', '--count', `${baseCommit}..${now}`])).trim());
    const conflicts = behind > 0 ? await mergeConflicts(workspace, now, checkpoint) : [];
    return { ...drift, currentCommit: now, behind, conflicts };
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    return { ...drift, problem: err.message.slice(0, 500) };
  }
}
