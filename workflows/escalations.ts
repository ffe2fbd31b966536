import type { JudgeReport } from '../domain/judge';
import type { FindingSummary } from '../domain/ledger';
import { escalate } from './decisions';
import { continueAsNewRound, deliver, endRejected, resumeWith, type LoopOutcome } from './endings';
import { withSummary, type LoopRun } from './loop-run';

// An escalation from the judge's report, and what the person's decision does: end, deliver, or send back.

export async function escalateAndSettle(
  run: LoopRun,
  report: JudgeReport,
  systemFindings: FindingSummary[],
  /** What an approval delivers as: the checkpoint accepted over the judge (the default), or a passed change let through. */
  approvedOutcome: 'PASSED' | 'APPROVED_BY_HUMAN' = 'APPROVED_BY_HUMAN',
): Promise<LoopOutcome> {
  const { decision, effect } = await escalate(run, {
    trigger: report.trigger ?? 'UNKNOWN',
    record: (escalationSequence) =>
      run
        .recorder()
        .recordEscalation.executeWithOptions(withSummary(`escalation ${escalationSequence}: ${report.trigger}`), [
          { loopId: run.loopId, escalationSequence, sequence: run.state.sequence, report },
        ]),
    systemBlockers: systemFindings.filter(
      (f) => f.source === 'SYSTEM' && f.severity === 'BLOCKER' && f.validity === 'VALID',
    ).length,
  });
  if (effect.action === 'END_REJECTED') return await endRejected(run);
  if (effect.action === 'DELIVER_OVERRIDE') return await deliver(run, approvedOutcome, decision.actor);
  await resumeWith(run, effect);
  return await continueAsNewRound(run, report, effect.guidance);
}
