import { Counter, Histogram } from 'prom-client';
import { METRIC_PREFIX, processRegistry } from './registry';

// What the loop does, observed where it happens (worker side): activities, gates, model usage,
// verdicts and human decisions. Labels are bounded: activity types, gate names, roles, providers,
// models (names from configuration or the provider's answer, capped), verdicts and triggers.

const registers = [processRegistry];

export const activityDuration = new Histogram({
  name: `${METRIC_PREFIX}activity_duration_seconds`,
  help: 'Wall time of each activity execution (attempt) by activity type (runMaker, runVerification, runReview, …) and outcome (completed, failed, cancelled).',
  labelNames: ['activity', 'outcome'] as const,
  buckets: [0.05, 0.25, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600],
  registers,
});

export const gateDuration = new Histogram({
  name: `${METRIC_PREFIX}gate_duration_seconds`,
  help: 'Wall time of each verification command by gate (tests, typecheck, lint, build, tests:frozen, acceptance) and status (PASSED, FAILED), from its stored evidence.',
  labelNames: ['gate', 'status'] as const,
  buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  registers,
});

export const modelTokens = new Counter({
  name: `${METRIC_PREFIX}model_tokens_total`,
  help: 'Tokens reported by agents and model calls as their execution records are written, by role (maker, reviewer, triage), provider, model and type (prompt, completion).',
  labelNames: ['role', 'provider', 'model', 'type'] as const,
  registers,
});

export const modelCost = new Counter({
  name: `${METRIC_PREFIX}model_cost_usd_total`,
  help: 'USD of agents and model calls (reported by the agent, or priced by LLM_PRICES) by role, provider and model; calls without a known price add nothing.',
  labelNames: ['role', 'provider', 'model'] as const,
  registers,
});

export const executions = new Counter({
  name: `${METRIC_PREFIX}executions_total`,
  help: 'Execution records written (agent processes, built-in agent sessions, model calls) by role, kind and outcome (EXIT_0, VALID_LEDGER, HTTP_429, …).',
  labelNames: ['role', 'kind', 'outcome'] as const,
  registers,
});

export const verdicts = new Counter({
  name: `${METRIC_PREFIX}verdicts_total`,
  help: "The judge's verdicts as they are recorded, by verdict (PASS, ITERATE, ESCALATE) and escalation trigger (none when there is none).",
  labelNames: ['verdict', 'trigger'] as const,
  registers,
});

export const decisionLatency = new Histogram({
  name: `${METRIC_PREFIX}decision_latency_seconds`,
  help: 'Time from an escalation opening to the decision on it being recorded, by decision (approve, reject, retry, amend) and escalation trigger.',
  labelNames: ['decision', 'trigger'] as const,
  buckets: [60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86_400, 3 * 86_400, 7 * 86_400],
  registers,
});

const MAX_LABEL_LENGTH = 80;

/** A label value from free text: bounded length, `unknown` when absent. */
export function labelValue(value: string | null | undefined): string {
  if (!value) return 'unknown';
  return value.length > MAX_LABEL_LENGTH ? value.slice(0, MAX_LABEL_LENGTH) : value;
}

/** `acceptance:AC-3` → `acceptance`, `setup:2` → `setup`: gate labels stay a small set. */
export function gateLabel(gate: string): string {
  if (gate === 'tests:frozen' || gate === 'tests:differential') return gate;
  return gate.split(':')[0] ?? gate;
}

export function observeGate(gate: string, status: string, startTime: Date | null, endTime: Date | null): void {
  if (!startTime || !endTime) return;
  gateDuration.observe({ gate: gateLabel(gate), status }, Math.max(0, endTime.getTime() - startTime.getTime()) / 1000);
}

export interface ExecutionUsage {
  role: string;
  kind: string;
  provider: string;
  model?: string | null;
  promptTokens?: number | null;
  completionTokens?: number | null;
  costUsd?: number | null;
  outcome: string;
}

export function observeExecution(e: ExecutionUsage): void {
  const model = { role: e.role, provider: labelValue(e.provider), model: labelValue(e.model) };
  executions.inc({ role: e.role, kind: e.kind, outcome: labelValue(e.outcome) });
  if (e.promptTokens && e.promptTokens > 0) modelTokens.inc({ ...model, type: 'prompt' }, e.promptTokens);
  if (e.completionTokens && e.completionTokens > 0)
    modelTokens.inc({ ...model, type: 'completion' }, e.completionTokens);
  if (e.costUsd && e.costUsd > 0) modelCost.inc(model, e.costUsd);
}

export function observeVerdict(verdict: string, trigger: string | null | undefined): void {
  verdicts.inc({ verdict, trigger: trigger ?? 'none' });
}

export function observeDecision(decision: string, trigger: string, openedAt: Date, decidedAt: Date): void {
  decisionLatency.observe({ decision, trigger }, Math.max(0, decidedAt.getTime() - openedAt.getTime()) / 1000);
}
