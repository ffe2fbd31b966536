import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Decision, DecisionKind } from '../domain/decision';
import type { LoopState } from '../domain/loop-state';

// Messages shared by the workflow and its clients (API, Temporal CLI/UI).

/**
 * A human decision on the open escalation, answered synchronously: the validator rejects it (the loop
 * is not awaiting one, or the decision is invalid for it) before anything is recorded. The API uses this.
 */
export const decideUpdate = defineUpdate<DecisionReceipt, [Decision]>('decide');

/** The same decision as a signal, for the Temporal CLI/UI; invalid or unexpected ones are logged and ignored. */
export const decisionSignal = defineSignal<[Decision]>('decision');

export const loopStateQuery = defineQuery<LoopState>('loopState');

export interface DecisionReceipt {
  escalationSequence: number;
  kind: DecisionKind;
}

/** ApplicationFailure types the update validator throws; the API maps them to 409 and 422. */
export const NOT_AWAITING_DECISION = 'NotAwaitingDecision';
export const INVALID_DECISION = 'InvalidDecision';
