import { sanitise } from '../domain/sanitise';
import { observeExecution } from '../telemetry/loop-metrics';
import type { ActivityDeps } from './deps';
import { insertExecutionRecord } from '../store/execution-records';

// Truthful record of every agent process and model call (docs/design.md §5.3): reports state only what is here.

export interface ExecutionRecordInput {
  loopId: string;
  iterationSeq: number | null;
  role: 'maker' | 'reviewer' | 'triage';
  /** AGENT_SESSION: a built-in agent's whole run (its model calls are recorded one by one besides). */
  kind: 'AGENT_PROCESS' | 'AGENT_SESSION' | 'MODEL_CALL';
  provider: string;
  model?: string | null;
  responseId?: string | null;
  requestId?: string | null;
  pid?: number | null;
  promptTokens?: number | null;
  completionTokens?: number | null;
  costUsd?: number | null;
  latencyMs: number;
  outcome: string;
  detail?: string | null;
}

export async function recordExecution(deps: ActivityDeps, input: ExecutionRecordInput): Promise<string> {
  // The detail quotes agent output and provider answers: sanitised here, so no caller can forget.
  const id = await insertExecutionRecord(deps.prisma, { ...input, detail: input.detail && sanitise(input.detail) });
  // Tokens and cost counted as they are recorded: the metrics agree with the records budgets are summed from.
  observeExecution(input);
  return id;
}
