import {
  allHandlersFinished,
  condition,
  deprecatePatch,
  makeContinueAsNewFunc,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { DecisionEffect } from '../domain/decision';
import type { JudgeReport } from '../domain/judge';
import type { LoopInput, LoopResume } from '../domain/loop-request';
import type { LoopStatus } from '../domain/loop-state';
import { gitWork } from './activities';
import { withHumanGuidance } from './details';
import { withSummary, type LoopRun } from './loop-run';
import { DELIVER_PULL_REQUEST, END_IN_DELIVERY } from './patches';
import { LoopIterationKey, LoopPhaseKey, LoopPullRequestKey, LoopStatusKey } from './search-attributes';

// How a run ends: delivered, rejected, or continued as a new run after a person sent the loop back.

export interface LoopOutcome {
  status: LoopStatus;
  iterations: number;
  reportId: string | null;
}

export async function endRejected(run: LoopRun): Promise<LoopOutcome> {
  await run.transition('REJECTED', 'DONE');
  await condition(allHandlersFinished);
  return { status: 'REJECTED', iterations: run.state.sequence, reportId: null };
}

/** Delivers the loop's change (patch, push, pull request) and ends the loop PASSED or APPROVED. */
export async function deliver(
  run: LoopRun,
  outcome: 'PASSED' | 'APPROVED_BY_HUMAN',
  approvedBy: string | null,
): Promise<LoopOutcome> {
  deprecatePatch(DELIVER_PULL_REQUEST);
  const status = outcome === 'PASSED' ? 'PASSED' : 'APPROVED';
  deprecatePatch(END_IN_DELIVERY);
  // The end as the read model gets it, written by the delivery once it delivered (the state and the Web UI move after it).
  const ended = run.progressRecord(status, 'DONE');
  const delivered = await gitWork.deliver.executeWithOptions(
    withSummary(approvedBy ? 'deliver (human override)' : 'deliver', { startToCloseTimeout: '10m' }),
    [{ loopId: run.loopId, sequence: run.state.sequence, outcome, approvedBy, ended }],
  );
  return await endDelivered(run, status, delivered);
}

/** The end of a delivered loop: the activity that delivered recorded it; the state and the Web UI follow. */
export async function endDelivered(
  run: LoopRun,
  status: 'PASSED' | 'APPROVED',
  delivered: { reportId: string; pullRequestUrl?: string | null },
): Promise<LoopOutcome> {
  if (delivered.pullRequestUrl)
    upsertSearchAttributes([{ key: LoopPullRequestKey, value: delivered.pullRequestUrl.slice(0, 1000) }]);
  run.moveTo(status, 'DONE');
  await condition(allHandlersFinished);
  return { status, iterations: run.state.sequence, reportId: delivered.reportId };
}

/** The contract a person's retry or amendment gave, frozen as the next version. */
export async function resumeWith(run: LoopRun, effect: Extract<DecisionEffect, { action: 'RESUME' }>): Promise<void> {
  run.contract = effect.contract;
  await run.freeze(run.state.contractVersion + 1, effect.reason);
}

/**
 * Continues the loop as a new run after a person sent it back to the maker: the iteration count restarts
 * at 1, so history stays bounded however often a human steps in.
 */
export async function continueAsNewRound(run: LoopRun, report: JudgeReport, guidance: string | null): Promise<never> {
  const carried: LoopResume = {
    contract: run.contract,
    contractVersion: run.state.contractVersion,
    contractHash: run.state.contractHash!,
    sequence: run.state.sequence,
    escalations: run.escalations,
    directives: guidance ? withHumanGuidance(report.directives, guidance) : report.directives,
    gatePlan: run.gatePlan,
    usage: run.usage,
    // After fixing the machine, a retry installs the dependencies again before the maker.
    setupDue: report.trigger === 'ENVIRONMENT' || run.setupDue,
    pause: run.state.pause ?? null,
  };
  // The new run starts with the Web UI's columns saying what is true now, not "AWAITING_DECISION".
  const resumed = makeContinueAsNewFunc<(input: LoopInput) => Promise<LoopOutcome>>({
    typedSearchAttributes: workflowInfo().typedSearchAttributes.updateCopy([
      { key: LoopStatusKey, value: 'RUNNING' },
      { key: LoopPhaseKey, value: 'CONTRACT' },
      { key: LoopIterationKey, value: 1 },
    ]),
  });
  // A refused signal still being recorded finishes in this run, not never.
  await condition(allHandlersFinished);
  return resumed({ loopId: run.loopId, request: run.request, resume: carried });
}
