import type { ServiceConfig } from '../../config/service-config';
import type { ExecutionRecordInput } from '../execution-records';
import type { CommandResult } from '../process/run-command';
import { modelCallCost } from '../usage';
import type { AgentUsage } from './presets';

/** What an agent CLI run records about itself, whatever role it played: identity, tokens, cost, time. */
export function agentProcessFields(
  config: Readonly<ServiceConfig>,
  backend: string,
  result: CommandResult,
  usage: AgentUsage,
): Pick<
  ExecutionRecordInput,
  'kind' | 'provider' | 'model' | 'responseId' | 'pid' | 'promptTokens' | 'completionTokens' | 'costUsd' | 'latencyMs'
> {
  return {
    kind: 'AGENT_PROCESS',
    provider: backend,
    model: usage.model,
    responseId: usage.sessionId,
    pid: result.pid,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    costUsd: agentRunCost(config, usage),
    latencyMs: result.endTime.getTime() - result.startTime.getTime(),
  };
}

/** The agent's own figure when it prints one, else its tokens priced from the configured table. */
export function agentRunCost(
  config: Readonly<ServiceConfig>,
  usage: Pick<AgentUsage, 'model' | 'promptTokens' | 'completionTokens' | 'costUsd'>,
): number | null {
  return (
    usage.costUsd ??
    (usage.model ? modelCallCost(config, usage.model, usage.promptTokens, usage.completionTokens) : null)
  );
}

/** How an agent CLI run ended, as its execution record states it (domain/maker-outcome.ts explains it). */
export function agentRunOutcome(result: CommandResult, usage: AgentUsage): { outcome: string; detail: string } {
  const outcome = result.spawnError
    ? 'SPAWN_FAILED'
    : result.timeoutStatus !== 'COMPLETED'
      ? result.timeoutStatus
      : usage.isError
        ? 'AGENT_ERROR'
        : `EXIT_${result.exitCode}`;
  // A limit of its own sandbox it ran into comes first: its own doing, but the machine's rule.
  const detail = [
    ...result.limitsReached.map((l) => l.message),
    ...(usage.apiErrorStatus ? [`The model API answered HTTP ${usage.apiErrorStatus}.`] : []),
    (result.spawnError ?? usage.summary ?? `${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`).trim(),
  ]
    .join('\n')
    .trim();
  return { outcome, detail };
}
