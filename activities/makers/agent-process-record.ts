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
    // The agent's own figure when it prints one, else priced from the configured table.
    costUsd:
      usage.costUsd ??
      (usage.model ? modelCallCost(config, usage.model, usage.promptTokens, usage.completionTokens) : null),
    latencyMs: result.endTime.getTime() - result.startTime.getTime(),
  };
}
