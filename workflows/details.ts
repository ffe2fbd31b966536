import { ActivityFailure } from '@temporalio/workflow';
import type { LoopState } from '../domain/loop-state';

// What the loop says about itself: in the Temporal UI, in failures and in refusal records.

/** The Temporal UI's "current details": where the loop is and, when it waits, what a person must do. */
export function currentDetails(state: LoopState): string {
  const where = `**${state.status}** · phase ${state.phase} · iteration ${state.roundIteration} of ${state.maxIterations}`;
  const verdict = state.lastVerdict ? ` · last verdict ${state.lastVerdict}` : '';
  const waiting = state.awaitingDecision
    ? `\n\nWaiting for a person: decide escalation #${state.awaitingDecision.escalationSequence} (approve, reject, retry or amend) in the inbox or with POST /v1/loops/${state.loopId}/decisions.`
    : '';
  const paused = state.pause
    ? `\n\n${state.status === 'PAUSED' ? 'Paused' : 'Pausing before the next maker'} by ${state.pause.actor}${state.pause.reason ? ` (${state.pause.reason.slice(0, 200)})` : ''}: resume with POST /v1/loops/${state.loopId}/resume.`
    : '';
  const failed = state.failureReason ? `\n\nReason: ${state.failureReason.slice(0, 500)}` : '';
  return `${where}${verdict}${waiting}${paused}${failed}`;
}

/**
 * "Activity task failed" says nothing: the reason is at the end of the cause chain (an invalid
 * verification.json, a timeout), named with the activity it came from.
 */
export function rootCause(err: unknown): string {
  let root = err;
  while (root instanceof Error && root.cause instanceof Error) root = root.cause;
  const message = root instanceof Error ? root.message : String(root);
  return err instanceof ActivityFailure && err.activityType ? `${err.activityType}: ${message}` : message;
}

/** A signal's decision as its sender named it (it may not be a valid decision at all). */
export function describeSignal(raw: unknown): string {
  const fields = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const text = (value: unknown) => (typeof value === 'string' ? `"${value.slice(0, 100)}"` : 'none');
  return `decision signal (kind ${text(fields.kind)}, actor ${text(fields.actor)})`;
}

/** The maker's directives with a person's guidance as the last one. */
export function withHumanGuidance(directives: string[], guidance: string): string[] {
  return [...directives, `${directives.length + 1}. Human guidance: ${guidance}`];
}
