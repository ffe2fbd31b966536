import type { Decision } from '../domain/decision';
import { sanitise } from '../domain/sanitise';
import type { ActivityDeps } from './deps';
import { issuedTicket, useTicket } from '../store/decision-tickets';
import { insertRecordOnce } from '../store/execution-records';

// Whether the workflow may act on a decision it received. Anyone who can reach Temporal can send an update
// or signal with any actor, and the workflow cannot check credentials itself (no I/O), so it asks here.

export interface AuthorizeDecisionInput {
  loopId: string;
  escalationSequence: number;
  decision: Decision;
  /** How the decision reached the workflow. */
  channel: 'update' | 'signal';
  /** Chosen by the workflow, so a retried attempt records a refusal once. */
  refusalId: string;
}

export type DecisionAuthorization = { honoured: true } | { honoured: false; reason: string };

/** Honours a decision with a matching API ticket, or one without from an operator-listed actor; records any other as refused. */
export async function authorizeDecision(
  deps: ActivityDeps,
  input: AuthorizeDecisionInput,
): Promise<DecisionAuthorization> {
  const reason = await refusalReason(deps, input);
  if (reason === null) return { honoured: true };
  const { kind, actor } = input.decision;
  await recordRefusedDecision(deps, {
    loopId: input.loopId,
    refusalId: input.refusalId,
    channel: input.channel,
    detail: `escalation #${input.escalationSequence}: ${kind} by "${actor}" refused: ${reason}`,
  });
  return { honoured: false, reason };
}

export interface RefusedDecisionInput {
  loopId: string;
  /** Chosen by the workflow, so a retried attempt records the refusal once. */
  refusalId: string;
  channel: 'update' | 'signal';
  /** What was refused and why, for the loop's list of refused decisions. */
  detail: string;
}

/**
 * Records a decision the loop did not act on: refused by authorizeDecision, or a signal the workflow
 * could not take at all (malformed, no escalation open, another escalation named). A signal cannot
 * answer its sender, so this record is how the sender learns it was ignored.
 */
export async function recordRefusedDecision(deps: ActivityDeps, input: RefusedDecisionInput): Promise<void> {
  await insertRecordOnce(deps.prisma, {
    id: input.refusalId,
    loopId: input.loopId,
    iterationSeq: null,
    role: 'decision',
    kind: 'DECISION',
    provider: `temporal-${input.channel}`,
    latencyMs: 0,
    outcome: 'REFUSED',
    detail: sanitise(input.detail).slice(0, 2000),
  });
}

async function refusalReason(
  deps: ActivityDeps,
  { loopId, escalationSequence, decision }: AuthorizeDecisionInput,
): Promise<string | null> {
  const { ticket, ...decided } = decision;
  if (ticket === undefined) {
    const allowed = deps.config.decisions.signalActors;
    if (allowed.includes('*') || allowed.includes(decision.actor)) return null;
    return allowed.length === 0
      ? 'no API ticket, and decisions sent to Temporal directly are disabled (DECISION_SIGNAL_ACTORS is empty)'
      : 'no API ticket, and the actor is not in DECISION_SIGNAL_ACTORS';
  }
  const issued = await issuedTicket(deps.prisma, ticket, decided);
  const fits =
    issued?.loopId === loopId &&
    issued.escalationSequence === escalationSequence &&
    issued.kind === decision.kind &&
    issued.actor === decision.actor;
  if (!fits) return 'the ticket matches no decision the API issued for this escalation';
  // Single use. A used one can only be this authorization retried: the workflow weighs one decision at a
  // time and stops waiting on an escalation once a decision is honoured, and the ticket names that escalation.
  await useTicket(deps.prisma, issued.id);
  return null;
}
