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

/** A person pauses the loop: it finishes its current step and holds before its next maker (workflows/pause.ts). */
export const pauseUpdate = defineUpdate<PauseReceipt, [PauseRequest]>('pause');

/** A person resumes a paused loop; resuming a loop that is not paused changes nothing. */
export const resumeUpdate = defineUpdate<PauseReceipt, [{ actor: string }]>('resume');

export interface PauseRequest {
  actor: string;
  reason?: string | null;
}

export interface PauseReceipt {
  /** A pause stands. */
  paused: boolean;
  /** The loop is holding now (status PAUSED), not still finishing its current step. */
  holding: boolean;
}

export const loopStateQuery = defineQuery<LoopState>('loopState');

export interface DecisionReceipt {
  escalationSequence: number;
  kind: DecisionKind;
}

/** ApplicationFailure types the update validator throws; the API maps them to 409 and 422. */
export const NOT_AWAITING_DECISION = 'NotAwaitingDecision';
export const INVALID_DECISION = 'InvalidDecision';
/** The pause or resume update's validator refused it (no actor, or a reason too long); the API maps it to 422. */
export const INVALID_PAUSE = 'InvalidPause';
