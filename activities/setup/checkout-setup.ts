import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import { sanitise } from '../../domain/sanitise';
import { insertSetupEvidence, setEvidenceDetails } from '../../store/evidence';
import { runSetupCommands, SETUP_GATE_ORDER, type SetupRun } from './run-setup';
import { attachSnapshot, findSnapshot, takeSnapshot, type Attached, type Snapshot } from './dependency-snapshots';
import { checkoutSetupKey } from './snapshot-inputs';

// A verification checkout's set-up: the loop's dependency snapshot for the checkout's key when one exists
// (dependency-snapshots.ts: an overlay mount, or a copy), else the set-up commands, whose installed
// dependencies, when they all passed, are copied into the snapshot the next checkouts with the same key
// receive. A failed set-up is never kept; a passed one that is not says why on its rows.

export interface CheckoutSetupRun extends SetupRun {
  iterationId: string;
  iterationSeq: number;
  /** Gate entrypoints put back at their base versions (not a change set-up made). */
  restored: string[];
}

export interface CheckoutSetupOutcome {
  problem: string | null;
}

export async function setUpCheckout(deps: ActivityDeps, run: CheckoutSetupRun): Promise<CheckoutSetupOutcome> {
  if (run.plan.commands.length === 0) return { problem: null };
  const started = new Date();
  const keyed = await checkoutSetupKey(run.workDir, run.plan, run.repoUrl);
  const found = keyed.key && (await findSnapshot(deps, run.loopId, keyed.key));
  const attached = found && (await attachSnapshot(run.workDir, found));
  if (found && attached) {
    Context.current().heartbeat({ phase: run.phase, step: 'setup-snapshot' });
    await recordReuse(deps, run, found, attached, started);
    return { problem: null };
  }
  const outcome = await runSetupCommands(deps, run);
  if (outcome.problem) return { problem: outcome.problem };
  const kept = keyed.key
    ? await takeSnapshot(deps, {
        loopId: run.loopId,
        checkout: run.workDir,
        plan: run.plan,
        key: keyed.key,
        iterationSeq: run.iterationSeq,
        evidenceIds: outcome.evidenceIds,
        restored: run.restored,
      })
    : keyed.notKept;
  if (typeof kept === 'string') await recordNotKept(deps, run, outcome.evidenceIds, kept);
  return { problem: null };
}

/**
 * Says on each set-up row why its result was not kept (the next checkout will run the set-up again), so a
 * person reading the evidence sees why an unchanged lockfile still installs.
 */
async function recordNotKept(
  deps: ActivityDeps,
  run: CheckoutSetupRun,
  evidenceIds: string[],
  reason: string,
): Promise<void> {
  const rows = evidenceIds.map((id, index) => ({
    id,
    sourceDetail: `${run.plan.commands[index]!.detail}; not kept as a dependency snapshot: ${sanitise(reason)}`,
  }));
  await setEvidenceDetails(deps.prisma, rows);
}

/**
 * One row per set-up command, REUSED: none ran; each names the snapshot and the set-up that made it, and
 * spans the time keying, finding and attaching the snapshot took.
 */
async function recordReuse(
  deps: ActivityDeps,
  run: CheckoutSetupRun,
  snapshot: Snapshot,
  attached: Attached,
  started: Date,
): Promise<void> {
  const now = new Date();
  const { key, iterationSeq, evidenceIds } = snapshot.meta;
  const how = attached === 'overlay' ? 'mounted under an overlay that keeps this checkout’s writes' : 'copied';
  const stdout =
    `not run: the dependencies were reused from snapshot ${key} (${how}), installed by iteration ${iterationSeq}'s ` +
    `set-up (evidence ${evidenceIds.join(', ')}), whose manifests, lockfiles, set-up commands and tools this checkout shares\n`;
  for (const [index, command] of run.plan.commands.entries()) {
    await insertSetupEvidence(deps.prisma, {
      loopId: run.loopId,
      iterationId: run.iterationId,
      gate: `${run.prefix}:${index + 1}`,
      gateOrder: SETUP_GATE_ORDER + index,
      status: 'REUSED',
      source: command.source,
      sourceDetail: `${command.detail}; reused snapshot ${key}`,
      command: command.argv,
      executionId: `snapshot:${key}`,
      startTime: started,
      endTime: now,
      exitCode: null,
      timeoutStatus: null,
      stdout,
      stderr: '',
      failureReason: null,
      failureSignature: null,
      assertionEvidence: [],
    });
  }
}
