import { z } from 'zod';
import { withGuidance, type GoalContract } from './contract';

// Human decisions on an escalation (SPEC §7) and the one pure function that applies them.

export const decisionSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('approve'),
    actor: z.string().trim().min(1).max(200),
    comment: z.string().trim().max(5000).optional(),
  }),
  z.strictObject({
    kind: z.literal('reject'),
    actor: z.string().trim().min(1).max(200),
    comment: z.string().trim().max(5000).optional(),
  }),
  z.strictObject({
    kind: z.literal('retry'),
    actor: z.string().trim().min(1).max(200),
    guidance: z.string().trim().min(1, 'retry needs guidance for the maker').max(5000),
    comment: z.string().trim().max(5000).optional(),
  }),
]);
export type Decision = z.infer<typeof decisionSchema>;

export type DecisionEffect =
  | { action: 'DELIVER_OVERRIDE' }
  | { action: 'END_REJECTED' }
  | { action: 'RESUME'; contract: GoalContract; reason: string };

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
      };
  }
}
