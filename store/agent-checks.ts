import type { PrismaClient } from './db';

// Smoke tests of the coding-agent presets (activities/makers/agent-check.ts): one row per check, the latest
// per preset shown at GET /v1/agents and /readyz.

export type AgentCheckDb = Pick<PrismaClient, 'agentCheck'>;

export interface AgentCheckRow {
  backend: string;
  host: string;
  version: string | null;
  ok: boolean;
  outcome: string;
  explanation: string;
  model: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number;
}

export function insertAgentCheck(db: AgentCheckDb, row: AgentCheckRow) {
  return db.agentCheck.create({ data: row });
}

/** The latest check of each preset that was ever checked. */
export function latestAgentChecks(db: AgentCheckDb) {
  return db.agentCheck.findMany({ distinct: ['backend'], orderBy: [{ backend: 'asc' }, { checkedAt: 'desc' }] });
}
