import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  deprecatePatch,
  isCancellation,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import { isWorse, recoveryBrief, scoreOf } from '../domain/backtrack';
import { describeIssues } from '../domain/ledger';
import { loopInputSchema, type LoopInput } from '../domain/loop-request';
import type { LoopStatus } from '../domain/loop-state';
import { gitWork, records } from './activities';
import { handleMessages } from './decisions';
import { rootCause } from './details';
import { deliverPassed } from './delivery';
import type { LoopOutcome } from './endings';
import { escalateAndSettle } from './escalations';
import { iterate, type IterationOutcome } from './iteration';
import { LoopRun, withSummary } from './loop-run';
import { CLAIM_CONTINUED_RUN, SETUP_PHASE } from './patches';
import { handlePause, holdIfPaused } from './pause';
import { prepare } from './prepare';
import { resolveTestNames } from './acceptance-tests';
import { setUp } from './setup';

export type { LoopOutcome } from './endings';

/**
 * One engineering loop. A run covers one round — iterations until PASS or an escalation — and, when a
 * human sends the loop back to the maker, continues as a new run carrying its state (LoopResume), so
 * the history of a loop that escalates many times stays bounded.
 */
export async function engineeringLoop(input: LoopInput): Promise<LoopOutcome> {
  const run = new LoopRun(parseInput(input));
  handleMessages(run);
  handlePause(run);
  try {
    if (!run.resumed) {
      const rejected = await prepare(run);
      if (rejected) return rejected;
    } else if (patched(CLAIM_CONTINUED_RUN)) {
      // The loop's activities act only for its own run (activities/run-binding.ts): this run takes over
      // from the one Temporal says it continues, which a run started or reset from outside cannot claim.
      await records.claimContinuedRun({
        loopId: run.loopId,
        continuedFrom: workflowInfo().continuedFromExecutionRunId ?? null,
      });
    }
    for (;;) {
      if (run.setupDue && (run.gatePlan.setup?.commands.length ?? 0) > 0) {
        deprecatePatch(SETUP_PHASE);
        const ended = await setUp(run);
        if (ended) return ended;
      }
      run.setupDue = false;
      if (!run.resumed && run.state.sequence === 0) {
        const rejected = await resolveTestNames(run);
        if (rejected) return rejected;
      }
      await holdIfPaused(run);
      const outcome = await iterate(run);
      const { report } = outcome;
      if (report.verdict === 'PASS') return await deliverPassed(run, outcome);
      if (report.verdict === 'ITERATE') {
        await carryOn(run, outcome);
        continue;
      }
      return await escalateAndSettle(run, report, outcome.systemFindings);
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    const status: LoopStatus = isCancellation(err) ? 'CANCELLED' : 'FAILED';
    const reason = isCancellation(err) ? 'cancelled' : rootCause(err);
    // Record the end even though the workflow scope is cancelled or failing.
    await CancellationScope.nonCancellable(() => run.transition(status, 'DONE', reason));
    throw err;
  }
}

function parseInput(input: LoopInput): LoopInput {
  const parsed = loopInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw ApplicationFailure.create({
    type: 'InvalidLoopInput',
    message: `invalid loop input: ${describeIssues(parsed.error.issues).join('; ')}`,
    nonRetryable: true,
  });
}

/**
 * After ITERATE: the judge's directives go to the next maker; an iteration that scores worse than the
 * best one so far is undone (the workspace goes back to the best checkpoint) and the maker told why.
 */
async function carryOn(run: LoopRun, { report, maker }: IterationOutcome): Promise<void> {
  run.directives = report.directives;
  const score = scoreOf(report, run.state.sequence, maker.checkpointCommit, maker.changedFiles);
  if (!run.best || !isWorse(score, run.best)) {
    run.best = score;
    return;
  }
  await gitWork.backtrack.executeWithOptions(withSummary(run.label(`backtrack to #${run.best.sequence}`)), [
    { loopId: run.loopId, sequence: run.state.sequence, toCommit: run.best.checkpointCommit },
  ]);
  run.directives = [...report.directives, `${report.directives.length + 1}. ${recoveryBrief(score, run.best)}`];
  run.setupDue = true;
}
