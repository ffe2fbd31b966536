import { deliverySettingsSchema } from '../domain/delivery';
import type { BaseDrift } from '../domain/base-drift';
import type { ContextImpact } from '../domain/context-impact';
import type { ResolvedGate } from '../domain/gates';
import type { FindingSummary } from '../domain/ledger';
import { findIteration, iterationAt, recordReplayedIteration } from '../store/iterations';
import { loopById, recordContextImpact } from '../store/loops';
import type { ActivityDeps } from './deps';
import { baseDrift } from './base-drift';
import { changeImpact } from './context-impact';
import { diffText, git, headCommit, replayOnto, resetTo, sha256 } from './git';
import { remoteAccessFor } from './git-askpass';
import { inspectChanges } from './inspect-changes';
import { handOver } from './sandbox/hand-over';

// Before a passed loop is delivered (docs/delivery.md, "Base drift" and "Context impact"): its base branch is
// fetched again. When it moved, the change is replayed onto where it is now as a new iteration with no maker —
// the workflow verifies that iteration again — or, when it no longer merges, the conflicts are returned for
// a person. The change's context impact is read too, and whether a MAJOR one must wait for a person.

export interface PrepareDeliveryInput {
  loopId: string;
  /** The iteration that passed. */
  sequence: number;
  roundIteration: number;
  contractVersion: number;
  /** For the tamper and scope check of a replayed change. */
  gates: ResolvedGate[];
}

/** The passed change on the moved base: an iteration of its own (`sequence`), inspected, not verified yet. */
export interface ReplayedChange {
  sequence: number;
  checkpointCommit: string;
  diffHash: string;
  changedFiles: string[];
  inspected: FindingSummary[];
}

export interface DeliveryPreparation {
  drift: BaseDrift;
  /** Set when the base moved and the change merged cleanly onto it. */
  replayed: ReplayedChange | null;
  contextImpact: ContextImpact;
  /** The impact is MAJOR and the request or the operator wants a person to approve delivery. */
  approvalRequired: boolean;
}

/** Idempotent: a retry finds the replayed iteration it made and answers with it. */
export async function prepareDelivery(deps: ActivityDeps, input: PrepareDeliveryInput): Promise<DeliveryPreparation> {
  const [loop, passed, earlier] = await Promise.all([
    loopById(deps.prisma, input.loopId),
    iterationAt(deps.prisma, input.loopId, input.sequence),
    findIteration(deps.prisma, input.loopId, input.sequence + 1),
  ]);
  const workspace = loop.workspacePath!;
  const checkpoint = passed.checkpointCommit!;
  const request = (loop.input ?? {}) as { repository?: { url?: string; baseRef?: string; credential?: string } };
  const settings = deliverySettingsSchema.safeParse((loop.input as { delivery?: unknown } | null)?.delivery ?? {});
  const approvalAsked =
    deps.config.decisions.majorImpactNeedsApproval || (settings.success && settings.data.majorImpactNeedsApproval);

  // The change's impact on the loop's base, read while the base is fetched again: what is delivered unless
  // the base moved and the change is replayed (then read again against the moved base).
  const impactOnBase = changeImpact(workspace, loop.baseCommit!, checkpoint);
  impactOnBase.catch(() => undefined);
  let drift: BaseDrift;
  let replayed: ReplayedChange | null = null;
  if (earlier?.replayedFromCheckpoint === checkpoint) {
    // A retry: this activity replayed the change already (and moved the loop's base).
    drift = await driftOf(workspace, loop.baseRef, earlier.replayedFromBase!, earlier.startCommit);
    replayed = await replayedIteration(deps, input, workspace, earlier);
  } else {
    const repositoryUrl = request.repository?.url ?? loop.repoUrl;
    const remote = await remoteAccessFor(deps.config, repositoryUrl, request.repository?.credential, 'repository url');
    drift = await baseDrift(
      workspace,
      { url: repositoryUrl, baseRef: request.repository?.baseRef ?? loop.baseRef, remote },
      loop.baseCommit!,
      checkpoint,
    );
    if (drift.behind > 0 && drift.conflicts?.length === 0) {
      const outcome = await replay(deps, input, {
        workspace,
        base: loop.baseCommit!,
        onto: drift.currentCommit!,
        checkpoint,
      });
      if (Array.isArray(outcome)) drift = { ...drift, conflicts: outcome };
      else replayed = outcome;
    }
  }
  const delivered = replayed?.checkpointCommit ?? checkpoint;
  const impact = replayed ? await changeImpact(workspace, drift.currentCommit!, delivered) : await impactOnBase;
  await recordContextImpact(deps.prisma, input.loopId, impact.level);
  return { drift, replayed, contextImpact: impact, approvalRequired: approvalAsked && impact.level === 'MAJOR' };
}

/**
 * Replays the change onto the moved base as iteration `sequence + 1` and makes that base the loop's; the
 * conflicting paths instead when it no longer merges. The maker's workspace follows, so a maker sent back
 * works on the moved base.
 */
async function replay(
  deps: ActivityDeps,
  input: PrepareDeliveryInput,
  at: { workspace: string; base: string; onto: string; checkpoint: string },
): Promise<ReplayedChange | string[]> {
  const replayedCommit = await replayOnto(
    at.workspace,
    at.onto,
    at.checkpoint,
    `engineering loop: the change of ${at.checkpoint.slice(0, 12)} replayed onto the moved base ${at.onto.slice(0, 12)}`,
  );
  // Conflicts after all (the base moved again between the checks): the workflow escalates.
  if (!replayedCommit.commit) return replayedCommit.conflicts;
  const commit = replayedCommit.commit;
  const [diff, files] = await Promise.all([
    diffText(at.workspace, at.onto, commit),
    git(at.workspace, ['diff', '--name-only', '-z', '--end-of-options', at.onto, commit, '--']),
  ]);
  await recordReplayedIteration(
    deps.prisma,
    {
      loopId: input.loopId,
      sequence: input.sequence + 1,
      roundIteration: input.roundIteration,
      contractVersion: input.contractVersion,
      startCommit: at.onto,
      checkpointCommit: commit,
      diffHash: sha256(diff),
      changedFiles: files.split('\0').filter(Boolean),
      replayedFromBase: at.base,
      replayedFromCheckpoint: at.checkpoint,
    },
    diff,
  );
  const row = await iterationAt(deps.prisma, input.loopId, input.sequence + 1);
  return replayedIteration(deps, input, at.workspace, row);
}

/** The replayed iteration as the workflow gets it: the workspace at its checkpoint, its change inspected. */
async function replayedIteration(
  deps: ActivityDeps,
  input: PrepareDeliveryInput,
  workspace: string,
  row: { sequence: number; checkpointCommit: string | null; diffHash: string | null; changedFiles: unknown },
): Promise<ReplayedChange> {
  const checkpointCommit = row.checkpointCommit!;
  if ((await headCommit(workspace)) !== checkpointCommit) {
    await resetTo(workspace, checkpointCommit);
    await handOver(deps.sandbox, workspace);
  }
  const inspected = await inspectChanges(deps, {
    loopId: input.loopId,
    sequence: row.sequence,
    contractVersion: input.contractVersion,
    gates: input.gates,
  });
  return {
    sequence: row.sequence,
    checkpointCommit,
    diffHash: row.diffHash ?? '',
    changedFiles: Array.isArray(row.changedFiles) ? (row.changedFiles as string[]) : [],
    inspected,
  };
}

async function driftOf(workspace: string, baseRef: string, from: string, to: string): Promise<BaseDrift> {
  const behind = Number((await git(workspace, ['rev-list', '--count', `${from}..${to}`])).trim());
  return { baseRef, baseCommit: from, currentCommit: to, behind, conflicts: [], problem: null };
}
