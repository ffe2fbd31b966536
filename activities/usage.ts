import type { Usage } from '../domain/budget';
import type { ServiceConfig } from '../config/service-config';
import type { ActivityDeps } from './deps';
import { spendingOf } from '../store/execution-records';

/** USD for a model call from the configured price table; null when the model has no price. */
export function modelCallCost(
  config: Readonly<ServiceConfig>,
  model: string,
  promptTokens: number | null,
  completionTokens: number | null,
): number | null {
  const price = config.prices[model];
  if (!price) return null;
  return ((promptTokens ?? 0) * price.input + (completionTokens ?? 0) * price.output) / 1_000_000;
}

/**
 * What one phase of one iteration spent, summed from its execution records — so a retried activity
 * reports the same usage as the attempt that did the work.
 */
export async function recordedUsage(
  deps: ActivityDeps,
  loopId: string,
  sequence: number,
  roles: string[],
): Promise<Usage> {
  const records = await spendingOf(deps.prisma, loopId, sequence, roles);
  return records.reduce<Usage>(
    (sum, r) => ({
      tokens: sum.tokens + (r.promptTokens ?? 0) + (r.completionTokens ?? 0),
      costUsd: sum.costUsd + (r.costUsd ?? 0),
      // Wall time of agents (processes and built-in sessions), not of the model calls inside them.
      agentMs: sum.agentMs + (r.kind === 'MODEL_CALL' ? 0 : r.latencyMs),
    }),
    { tokens: 0, costUsd: 0, agentMs: 0 },
  );
}
