import type { Decision, DecisionRequest } from '../domain/decision';
import { issueDecisionTicket } from '../store/decision-tickets';
import { escalationOfLoop } from '../store/escalations';
import type { DecisionReceipt } from '../workflows/messages';
import type { RouteDeps } from './deps';
import { deliverDecision } from './decision-delivery';
import { conflict, notFound } from './errors';

/**
 * Sends a person's decision on the escalation it names. That escalation must be the loop's open one (a
 * stale inbox tab gets 409), and the decision travels with a single-use ticket whose hash is stored
 * here, so the workflow can tell it from a decision sent to Temporal directly.
 */
export async function sendDecision(
  deps: Pick<RouteDeps, 'prisma' | 'temporal'>,
  loop: { id: string; workflowId: string },
  request: DecisionRequest,
  actor: string,
): Promise<DecisionReceipt> {
  const escalation = await escalationOfLoop(deps.prisma, loop.id, request.escalationId);
  if (!escalation) throw notFound(`escalation ${request.escalationId} of loop ${loop.id}`);
  if (escalation.status !== 'OPEN')
    throw conflict(`loop ${loop.id}: escalation #${escalation.sequence} was already decided and is not the open one`);
  const { escalationId: _named, ...body } = request;
  const decision: Decision = { ...body, actor, escalationSequence: escalation.sequence };
  const token = await issueDecisionTicket(deps.prisma, escalation, decision);
  return deliverDecision(deps, loop.workflowId, { ...decision, ticket: token });
}
