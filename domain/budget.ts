import { z } from 'zod';

// Per-loop spending limits (tokens, USD, agent wall time). Reaching one escalates; never silent.

export const budgetSchema = z.strictObject({
  maxTokens: z.number().int().min(1).optional(),
  maxCostUsd: z.number().positive().optional(),
  maxAgentSeconds: z.number().int().min(1).optional(),
});
export type Budget = z.infer<typeof budgetSchema>;

/** What a loop has spent so far, summed from its activities' execution records. */
export interface Usage {
  tokens: number;
  costUsd: number;
  agentMs: number;
}

export const NO_USAGE: Usage = { tokens: 0, costUsd: 0, agentMs: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  return { tokens: a.tokens + b.tokens, costUsd: a.costUsd + b.costUsd, agentMs: a.agentMs + b.agentMs };
}

/** The first limit the usage has reached, in words; null while within budget. */
export function budgetExhausted(budget: Budget, usage: Usage): string | null {
  if (budget.maxTokens !== undefined && usage.tokens >= budget.maxTokens) {
    return `token budget reached: ${usage.tokens} of ${budget.maxTokens} tokens used`;
  }
  if (budget.maxCostUsd !== undefined && usage.costUsd >= budget.maxCostUsd) {
    return `cost budget reached: $${usage.costUsd.toFixed(4)} of $${budget.maxCostUsd.toFixed(2)} spent`;
  }
  if (budget.maxAgentSeconds !== undefined && usage.agentMs >= budget.maxAgentSeconds * 1000) {
    return `agent time budget reached: ${Math.round(usage.agentMs / 1000)} s of ${budget.maxAgentSeconds} s used`;
  }
  return null;
}
