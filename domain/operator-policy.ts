import { z } from 'zod';
import { egressEntryTextSchema, parseEgressEntry, type EgressEntry } from './egress';
import type { LoopRequest } from './loop-request';
import { isPresetBackend, PRESET_BACKENDS } from './maker-presets';

// The operator's ceilings (the seeds' immutable global layer): what no loop request may exceed, set once
// for the service in OPERATOR_POLICY (JSON) or OPERATOR_POLICY_FILE, shown at GET /v1/policy. A request
// above one is refused with 400 naming the field and the ceiling; a budget left out takes the ceiling.
// Pure: the API checks requests against it before anything is stored.

export const operatorPolicySchema = z.strictObject({
  maxIterations: z.number().int().min(1).optional(),
  /** The maker's timeoutSeconds, whatever its backend. */
  maxMakerTimeoutSeconds: z.number().int().min(1).optional(),
  /** Each gate's timeoutSeconds, in the request. */
  maxGateTimeoutSeconds: z.number().int().min(1).optional(),
  /** An agent reviewer's timeoutSeconds. */
  maxReviewerTimeoutSeconds: z.number().int().min(1).optional(),
  /** budget.maxCostUsd per loop; a request without one gets this. */
  maxCostUsdPerLoop: z.number().positive().optional(),
  /** maker.backend values allowed (command, llm, claude-code, codex, aider, gemini); absent: all. */
  allowedMakerBackends: z.array(z.string().min(1)).min(1).optional(),
  /** Models a request may name for its maker or reviewer; absent: any. */
  allowedModels: z.array(z.string().min(1)).min(1).optional(),
  /**
   * Per preset (claude-code, codex, aider, …), the hosts its agents — makers and reviewer agents — may reach,
   * in place of SANDBOX_EGRESS_AGENTS; a request's `network` can only narrow it. [] gives no network.
   */
  agentNetwork: z.partialRecord(z.enum(PRESET_BACKENDS), z.array(egressEntryTextSchema).max(64)).optional(),
});
export type OperatorPolicy = z.infer<typeof operatorPolicySchema>;

export interface PolicyViolation {
  /** The request field, as the API's 400 names it (body.maker.timeoutSeconds). */
  field: string;
  message: string;
}

/** The first thing in `request` above a ceiling, or null. */
export function policyViolation(policy: OperatorPolicy, request: LoopRequest): PolicyViolation | null {
  const over = (field: string, value: number, ceiling: number | undefined, name: string) =>
    ceiling !== undefined && value > ceiling
      ? { field, message: `${value} is above the operator's ceiling ${name} = ${ceiling}` }
      : null;
  const maker = request.maker;
  const reviewer = request.reviewer;
  const reviewerAgent = reviewer.backend === 'agent' ? reviewer.agent : null;
  const reviewerModel = reviewer.backend === 'agent' ? modelOf(reviewer.agent) : reviewer.model;
  const checks: Array<PolicyViolation | null> = [
    over('body.maxIterations', request.maxIterations, policy.maxIterations, 'maxIterations'),
    over('body.maker.timeoutSeconds', maker.timeoutSeconds, policy.maxMakerTimeoutSeconds, 'maxMakerTimeoutSeconds'),
    ...request.gates.map((g, i) =>
      over(`body.gates.${i}.timeoutSeconds`, g.timeoutSeconds, policy.maxGateTimeoutSeconds, 'maxGateTimeoutSeconds'),
    ),
    reviewerAgent
      ? over(
          'body.reviewer.agent.timeoutSeconds',
          reviewerAgent.timeoutSeconds,
          policy.maxReviewerTimeoutSeconds,
          'maxReviewerTimeoutSeconds',
        )
      : null,
    request.budget.maxCostUsd === undefined
      ? null
      : over('body.budget.maxCostUsd', request.budget.maxCostUsd, policy.maxCostUsdPerLoop, 'maxCostUsdPerLoop'),
    policy.allowedMakerBackends && !policy.allowedMakerBackends.includes(maker.backend)
      ? {
          field: 'body.maker.backend',
          message: `"${maker.backend}" is not among the operator's allowedMakerBackends (${policy.allowedMakerBackends.join(', ')})`,
        }
      : null,
    modelViolation(policy, 'body.maker.model', modelOf(maker)),
    modelViolation(policy, reviewerAgent ? 'body.reviewer.agent.model' : 'body.reviewer.model', reviewerModel),
  ];
  return checks.find((c) => c !== null) ?? null;
}

/**
 * The hosts a backend's agents may reach before a request narrows them: the policy's agentNetwork list for
 * its preset, else `agentsList` (SANDBOX_EGRESS_AGENTS).
 */
export function agentAllowList(
  policy: OperatorPolicy,
  agentsList: readonly EgressEntry[],
  backend: string,
): EgressEntry[] {
  const presetList = isPresetBackend(backend) ? policy.agentNetwork?.[backend] : undefined;
  return presetList ? presetList.map(parseEgressEntry) : [...agentsList];
}

/** The request as the policy shapes it: a budget left out takes the operator's ceiling. */
export function withPolicyDefaults(policy: OperatorPolicy, request: LoopRequest): LoopRequest {
  if (policy.maxCostUsdPerLoop === undefined || request.budget.maxCostUsd !== undefined) return request;
  return { ...request, budget: { ...request.budget, maxCostUsd: policy.maxCostUsdPerLoop } };
}

function modelViolation(policy: OperatorPolicy, field: string, model: string | undefined): PolicyViolation | null {
  if (!policy.allowedModels || model === undefined || policy.allowedModels.includes(model)) return null;
  return {
    field,
    message: `"${model}" is not among the operator's allowedModels (${policy.allowedModels.join(', ')})`,
  };
}

function modelOf(settings: object): string | undefined {
  return 'model' in settings && typeof settings.model === 'string' ? settings.model : undefined;
}

/** The policy in one line for a report: "maxIterations 5; allowedMakerBackends codex, aider; …", or "none". */
export function describeOperatorPolicy(policy: OperatorPolicy): string {
  const parts = Object.entries(policy).map(([name, value]) => {
    if (Array.isArray(value)) return `${name} ${value.join(', ')}`;
    if (value !== null && typeof value === 'object') {
      const lists = Object.entries(value as Record<string, string[]>).map(
        ([preset, hosts]) => `${preset}: ${hosts.join(', ') || 'no host'}`,
      );
      return `${name} (${lists.join('; ')})`;
    }
    return `${name} ${String(value)}`;
  });
  return parts.length ? parts.join('; ') : 'none';
}
