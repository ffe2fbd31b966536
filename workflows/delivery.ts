import { patched, upsertSearchAttributes } from '@temporalio/workflow';
import { describeDrift, type BaseDrift } from '../domain/base-drift';
import type { JudgeReport } from '../domain/judge';
import type { FindingSummary } from '../domain/ledger';
import type { DeliveryPreparation, ReplayedChange } from '../activities/prepare-delivery';
import { gitWork } from './activities';
import { deliver, endDelivered, type LoopOutcome } from './endings';
import { escalateAndSettle } from './escalations';
import { beginIteration, judge, verify, type IterationOutcome, type MadeChange } from './iteration';
import { withSummary, type LoopRun } from './loop-run';
import { DELIVER_WHEN_PREPARED, PREPARE_DELIVERY } from './patches';
import { LoopContextImpactKey } from './search-attributes';

// A passed change on its way out (docs/delivery.md): when its base branch moved meanwhile, the change is
// replayed onto it and verified there again — a conflict or a new failure goes to a person (BASE_DRIFT);
// a MAJOR context impact waits for a person when the request or the operator asks (MAJOR_CONTEXT_IMPACT).

export async function deliverPassed(run: LoopRun, passed: IterationOutcome): Promise<LoopOutcome> {
  if (!patched(PREPARE_DELIVERY)) return await deliver(run, 'PASSED', null);
  // The end as the read model gets it, should the preparation find nothing in the way and deliver.
  const ended = patched(DELIVER_WHEN_PREPARED) ? run.progressRecord('PASSED', 'DONE') : null;
  const prepared = await gitWork.prepareDelivery.executeWithOptions(
    ended
      ? withSummary('prepare delivery, then deliver', { startToCloseTimeout: '20m' })
      : withSummary('prepare delivery: base and context impact', { startToCloseTimeout: '10m' }),
    [
      {
        loopId: run.loopId,
        sequence: run.state.sequence,
        roundIteration: run.state.roundIteration,
        contractVersion: run.state.contractVersion,
        gates: run.gatePlan.gates,
        ...(ended ? { deliverWhenClear: { ended } } : {}),
      },
    ],
  );
  upsertSearchAttributes([{ key: LoopContextImpactKey, value: prepared.contextImpact.level }]);
  if (prepared.delivered) return await endDelivered(run, 'PASSED', prepared.delivered);
  const { drift, replayed } = prepared;
  if (drift.behind > 0 && !replayed) return await escalateAndSettle(run, drifted(passed.report, drift), []);
  if (replayed) {
    const again = await verifyReplayed(run, replayed, passed);
    if (again.report.verdict !== 'PASS')
      return await escalateAndSettle(run, drifted(again.report, drift), again.systemFindings);
  }
  if (prepared.approvalRequired)
    return await escalateAndSettle(run, majorImpact(passed.report, prepared), [], 'PASSED');
  return await deliver(run, 'PASSED', null);
}

/** The replayed change verified as an iteration of its own; the review of the change it replays stands. */
async function verifyReplayed(
  run: LoopRun,
  replayed: ReplayedChange,
  passed: IterationOutcome,
): Promise<{ report: JudgeReport; systemFindings: FindingSummary[] }> {
  const iteration = beginIteration(run, replayed.checkpointCommit);
  const made: MadeChange = {
    checkpointCommit: replayed.checkpointCommit,
    inspected: replayed.inspected,
    noChange: false,
    diffHash: replayed.diffHash,
    cumulativeDiffEmpty: replayed.changedFiles.length === 0,
    agentReport: null,
  };
  const { verification, systemFindings } = await verify(run, made);
  const report = await judge(run, iteration, { maker: made, verification, review: passed.review, systemFindings });
  return { report, systemFindings };
}

function drifted(report: JudgeReport, drift: BaseDrift): JudgeReport {
  const conflicted = !!drift.conflicts?.length;
  return {
    ...report,
    verdict: 'ESCALATE',
    trigger: 'BASE_DRIFT',
    reasons: [...report.reasons, `base: ${describeDrift(drift)}`],
    directives: conflicted
      ? [
          `1. The base \`${drift.baseRef}\` moved and the change no longer merges onto it (conflicts in ${drift.conflicts!.slice(0, 10).join(', ')}): the workspace is still on the loop's base.`,
        ]
      : report.directives,
  };
}

function majorImpact(report: JudgeReport, prepared: DeliveryPreparation): JudgeReport {
  return {
    ...report,
    verdict: 'ESCALATE',
    trigger: 'MAJOR_CONTEXT_IMPACT',
    reasons: [...report.reasons, ...prepared.contextImpact.reasons.map((r) => `context impact MAJOR: ${r}`)],
  };
}
