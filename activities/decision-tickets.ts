import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '../domain/contract';
import type { Decision } from '../domain/decision';

// Decision tickets: the API's proof to the workflow that an authenticated person made this exact decision.
// The API issues one per decision and stores only its hash (api/decision-submission.ts); the worker's
// authorizeDecision activity recomputes the hash from the decision it received.

export function newTicketToken(): string {
  return randomBytes(32).toString('base64url');
}

/** sha256 of the token and the decision it was issued for, so a ticket does not fit an altered decision. */
export function ticketHash(token: string, decision: Omit<Decision, 'ticket'>): string {
  return createHash('sha256').update(`${token}\n${canonicalJson(decision)}`).digest('hex');
}
