import { ApplicationFailure, condition, deprecatePatch, log, setHandler, uuid4 } from '@temporalio/workflow';
import {
  applyDecision,
  decisionSchema,
  InvalidDecisionError,
  type Decision,
  type DecisionEffect,
} from '../domain/decision';
import { describeIssues } from '../domain/ledger';
import { describeSignal } from './details';
import { decideUpdate, decisionSignal, INVALID_DECISION, loopStateQuery, NOT_AWAITING_DECISION } from './messages';
import { withSummary, type LoopRun, type ReceivedDecision } from './loop-run';
import { AUTHORIZE_DECISIONS, DEADLINE_SPARES_SYSTEM_BLOCKERS, RECORD_REFUSED_SIGNALS } from './patches';

// Human decisions: the loop's message handlers, and one way to escalate and wait for a person.

const DEADLINE_ACTOR = 'system:decision-deadline';

/** The state query, the decision update (validated before it is accepted) and the decision signal. */
export function handleMessages(run: LoopRun): void {
  setHandler(loopStateQuery, () => run.state);
  setHandler(
    decideUpdate,
    (decision) => {
      run.pendingDecision = { decision, channel: 'update' };
      return { escalationSequence: run.state.awaitingDecision!.escalationSequence, kind: decision.kind };
    },
    {
      validator: (decision) => {
        const problem = decisionProblem(run, decision);
        if (problem) throw ApplicationFailure.create({ ...problem, nonRetryable: true });
      },
    },
  );
  setHandler(decisionSignal, async (decision) => {
    const problem = decisionProblem(run, decision);
    if (!problem) {
      run.pendingDecision = { decision, channel: 'signal' };
      return;
    }
    log.warn('ignored a decision signal', problem);
    deprecatePatch(RECORD_REFUSED_SIGNALS);
    await run.recorder().recordRefusedDecision({
      loopId: run.loopId,
      refusalId: uuid4(),
      channel: 'signal',
      detail: `${describeSignal(decision)} refused: ${problem.message}`,
    });
  });
}

/** Why a decision cannot be taken now, or null. Shared by the update's validator and the signal. */
function decisionProblem(run: LoopRun, raw: unknown): { type: string; message: string } | null {
  const { loopId, state } = run;
  const decision = decisionSchema.safeParse(raw);
  if (!decision.success) return { type: INVALID_DECISION, message: describeIssues(decision.error.issues).join('; ') };
  if (!state.awaitingDecision || run.pendingDecision) {
    return {
      type: NOT_AWAITING_DECISION,
      message: `loop ${loopId} is not awaiting a decision (status ${state.status})`,
    };
  }
  // A decision naming another escalation was made on a stale view of the loop.
  const named = decision.data.escalationSequence;
  const open = state.awaitingDecision.escalationSequence;
  if (named !== undefined && named !== open) {
    return {
      type: NOT_AWAITING_DECISION,
      message: `loop ${loopId} is not awaiting a decision on escalation #${named} (escalation #${open} is open)`,
    };
  }
  try {
    applyDecision(decision.data, run.contract);
  } catch (err) {
    if (err instanceof InvalidDecisionError) return { type: INVALID_DECISION, message: err.message };
    throw err;
  }
  return null;
}

export interface Escalation {
  trigger: string;
  /** Writes the escalation's record (its report) under the sequence number it was given. */
  record: (escalationSequence: number) => Promise<unknown>;
  /** How many system BLOCKER findings (tampering, scope) it carries: a deadline never approves those. */
  systemBlockers?: number;
}

/** Opens the loop's next escalation, waits for an honoured decision, and says what it does to the loop. */
export async function escalate(
  run: LoopRun,
  escalation: Escalation,
): Promise<{ decision: Decision; effect: DecisionEffect }> {
  run.escalations += 1;
  const decision = await awaitDecision(run, run.escalations, escalation);
  return { decision, effect: applyDecision(decision, run.contract) };
}

/**
 * Opens escalation number `escalationSequence` and waits, durably, for a decision that is honoured — or
 * for the deadline, after which the configured default applies.
 */
async function awaitDecision(
  run: LoopRun,
  escalationSequence: number,
  { trigger, record, systemBlockers = 0 }: Escalation,
): Promise<Decision> {
  // Accept decisions from here on: the API may see the escalation row before `record` returns.
  run.state.awaitingDecision = { escalationSequence, trigger };
  await record(escalationSequence);
  await run.transition('AWAITING_DECISION', 'AWAITING_DECISION');
  const deadlineSeconds = run.request.escalation.decisionDeadlineSeconds;
  const deadlineAt = deadlineSeconds ? Date.now() + deadlineSeconds * 1000 : null;
  let decision: Decision | null = null;
  while (!decision) {
    decision = (await decisionArrives(run, deadlineAt))
      ? await honoured(run, run.pendingDecision!, escalationSequence)
      : atDeadline(run, deadlineSeconds!, systemBlockers);
    run.pendingDecision = undefined;
  }
  run.state.awaitingDecision = null;
  await run
    .recorder()
    .recordDecision.executeWithOptions(withSummary(`decision: ${decision.kind} by ${decision.actor}`), [
      { loopId: run.loopId, escalationSequence, decision },
    ]);
  return decision;
}

/** Waits for a decision until `deadlineAt` (workflow time; null: no deadline). False once the deadline passed. */
async function decisionArrives(run: LoopRun, deadlineAt: number | null): Promise<boolean> {
  if (deadlineAt === null) return condition(() => run.pendingDecision !== undefined).then(() => true);
  const left = deadlineAt - Date.now();
  return left > 0 && condition(() => run.pendingDecision !== undefined, left);
}

/**
 * The decision to act on, or null when authorizeDecision refuses it (it records why; the loop keeps
 * waiting). The API's ticket ends up in this run's history, which is acceptable: it is single-use and
 * fits only this decision on this escalation. It goes no further (Decision row, summaries, logs).
 */
async function honoured(
  run: LoopRun,
  { decision, channel }: ReceivedDecision,
  escalationSequence: number,
): Promise<Decision | null> {
  deprecatePatch(AUTHORIZE_DECISIONS);
  const authorization = await run
    .recorder()
    .authorizeDecision.executeWithOptions(withSummary(`authorize ${decision.kind} by ${decision.actor}`), [
      { loopId: run.loopId, escalationSequence, decision, channel, refusalId: uuid4() },
    ]);
  if (!authorization.honoured) {
    log.warn('refused a decision', {
      escalationSequence,
      channel,
      actor: decision.actor,
      reason: authorization.reason,
    });
    return null;
  }
  return { ...decision, ticket: undefined };
}

/** What applies when nobody decided in time. A deadline never approves what the system itself flagged. */
function atDeadline(run: LoopRun, seconds: number, systemBlockers: number): Decision {
  const comment = `no decision within ${seconds} s`;
  const defaultDecision = run.request.escalation.defaultDecision;
  if (defaultDecision !== 'approve' || systemBlockers === 0)
    return { kind: defaultDecision, actor: DEADLINE_ACTOR, comment };
  deprecatePatch(DEADLINE_SPARES_SYSTEM_BLOCKERS);
  return {
    kind: 'reject',
    actor: DEADLINE_ACTOR,
    comment: `${comment}; the default approve does not apply to ${systemBlockers} system BLOCKER finding(s) (tampering or out-of-scope changes)`,
  };
}
