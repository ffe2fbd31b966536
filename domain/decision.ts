import { z } from 'zod';
import { goalContractSchema, withGuidance, type GoalContract } from './contract';
import { describeIssues } from './ledger';

// Human decisions on an escalation (docs/design.md §7.2) and the one pure function that applies them.

const actor = z.string().trim().min(1).max(200);
const comment = z.string().trim().max(5000).optional();

/** Contract fields an `amend` may replace; anything omitted stays as it is. */
export const contractAmendmentSchema = z
  .strictObject({
    objective: z.string(),
    outcome: z.string(),
    acceptanceCriteria: z.array(z.unknown()),
    constraints: z.array(z.string()),
    outOfScope: z.array(z.string()),
    scope: z.array(z.string()),
  })
  .partial()
  .refine((a) => Object.keys(a).length > 0, 'an amendment must change at least one contract field')
  // The refinement as the OpenAPI document can say it.
  .meta({ minProperties: 1 });

const guidance = z.string().trim().min(1, 'retry needs guidance for the maker').max(5000);

/**
 * A decision as a person sends it over HTTP: who decided comes from their API key, not from the body.
 * It names the escalation it answers (the id GET /v1/escalations shows), so a stale page cannot decide
 * a later escalation of the same loop.
 */
const requestFields = { escalationId: z.uuid(), comment };
export const decisionRequestSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('approve'), ...requestFields }),
  z.strictObject({ kind: z.literal('reject'), ...requestFields }),
  z.strictObject({ kind: z.literal('retry'), guidance, ...requestFields }),
  z.strictObject({ kind: z.literal('amend'), contract: contractAmendmentSchema, ...requestFields }),
]);
export type DecisionRequest = z.infer<typeof decisionRequestSchema>;

/**
 * A decision as the workflow receives it (from the API, or by hand from the Temporal CLI/UI): with its
 * actor, optionally the escalation it answers, and — from the API — the ticket that proves the API
 * authenticated it (store/decision-tickets.ts). Without a ticket only operator-listed actors are honoured.
 */
const workflowFields = {
  actor,
  comment,
  escalationSequence: z.number().int().min(1).optional(),
  ticket: z.string().min(1).max(200).optional(),
};
export const decisionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('approve'), ...workflowFields }),
  z.strictObject({ kind: z.literal('reject'), ...workflowFields }),
  z.strictObject({ kind: z.literal('retry'), guidance, ...workflowFields }),
  z.strictObject({ kind: z.literal('amend'), contract: contractAmendmentSchema, ...workflowFields }),
]);
export type Decision = z.infer<typeof decisionSchema>;
export type DecisionKind = Decision['kind'];

export type DecisionEffect =
  | { action: 'DELIVER_OVERRIDE' }
  | { action: 'END_REJECTED' }
  | { action: 'RESUME'; contract: GoalContract; reason: string; guidance: string | null };

export class InvalidDecisionError extends Error {}

/** What a decision does to the loop. Throws InvalidDecisionError when an amendment makes the contract invalid. */
export function applyDecision(decision: Decision, contract: GoalContract): DecisionEffect {
  switch (decision.kind) {
    case 'approve':
      return { action: 'DELIVER_OVERRIDE' };
    case 'reject':
      return { action: 'END_REJECTED' };
    case 'retry':
      return {
        action: 'RESUME',
        contract: withGuidance(contract, decision.guidance),
        reason: `retry by ${decision.actor}`,
        guidance: decision.guidance,
      };
    case 'amend': {
      const amended = goalContractSchema.safeParse({ ...contract, ...decision.contract });
      if (!amended.success) {
        throw new InvalidDecisionError(
          `the amended contract is invalid: ${describeIssues(amended.error.issues)
            .map((i) => `contract.${i}`)
            .join('; ')}`,
        );
      }
      return { action: 'RESUME', contract: amended.data, reason: `amended by ${decision.actor}`, guidance: null };
    }
  }
}
