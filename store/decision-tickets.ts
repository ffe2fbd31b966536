import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '../domain/contract';
import type { Decision } from '../domain/decision';
import type { PrismaClient } from './db';

// Decision tickets: the API's proof to the workflow that an authenticated person made this exact decision.
// The API issues one per decision and stores only its hash (api/decision-submission.ts); the worker's
// authorizeDecision activity recomputes the hash from the decision it received.

/** Stores a new ticket for `decision` and returns the token, which only its hash is stored of. */
export async function issueDecisionTicket(
  db: PrismaClient,
  escalation: { loopId: string; sequence: number },
  decision: Omit<Decision, 'ticket'>,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.decisionTicket.create({
    data: {
      loopId: escalation.loopId,
      escalationSequence: escalation.sequence,
      tokenHash: ticketHash(token, decision),
      kind: decision.kind,
      actor: decision.actor,
    },
  });
  return token;
}

/** The ticket issued with this token for exactly this decision, or null. */
export function issuedTicket(db: PrismaClient, token: string, decision: Omit<Decision, 'ticket'>) {
  return db.decisionTicket.findUnique({ where: { tokenHash: ticketHash(token, decision) } });
}

/** Marks a ticket used; one used already keeps its first use. */
export async function useTicket(db: PrismaClient, id: string): Promise<void> {
  await db.decisionTicket.updateMany({ where: { id, usedAt: null }, data: { usedAt: new Date() } });
}

/** sha256 of the token and the decision it was issued for, so a ticket does not fit an altered decision. */
function ticketHash(token: string, decision: Omit<Decision, 'ticket'>): string {
  return createHash('sha256')
    .update(`${token}\n${canonicalJson(decision)}`)
    .digest('hex');
}
