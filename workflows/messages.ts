import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Decision, DecisionKind } from '../domain/decision';
import type { LoopState } from '../domain/loop-state';

// Messages shared by the workflow and its clients (API, Temporal CLI/UI).

/**
 * A human decision on the open escalation, answered synchronously: the validator rejects it (the loop
 * is not awaiting one, it names another escalation, or it is invalid) before anything is recorded. The
 * API uses this, with a ticket; the loop acts on a decision only once the authorizeDecision activity
 * honours it, so an accepted update without a valid ticket is refused afterwards and the loop keeps waiting.
 */
export const decideUpdate = defineUpdate<DecisionReceipt, [Decision]>('decide');

/**
 * The same decision as a signal, for the Temporal CLI/UI; invalid or unexpected ones are logged and
 * ignored. Without an API ticket it is honoured only from actors listed in DECISION_SIGNAL_ACTORS.
 */
export const decisionSignal = defineSignal<[Decision]>('decision');

export const loopStateQuery = defineQuery<LoopState>('loopState');

export interface DecisionReceipt {
  escalationSequence: number;
  kind: DecisionKind;
}

/** ApplicationFailure types the update validator throws; the API maps them to 409 and 422. */
export const NOT_AWAITING_DECISION = 'NotAwaitingDecision';
export const INVALID_DECISION = 'InvalidDecision';
