import { z } from 'zod';
import { AGENT_TOOL_PINS, installedVersion } from '../config/agent-tools';
import { formatEgressEntry } from '../domain/egress';
import { PRESET_BACKENDS, type PresetBackend } from '../domain/maker-presets';
import { agentAllowList } from '../domain/operator-policy';
import { latestAgentChecks, type AgentCheckDb } from '../store/agent-checks';
import type { ApiPolicy } from './deps';

// The coding-agent presets as an operator needs to see them (GET /v1/agents, /readyz, `loop agents`): the
// pinned CLI and the version installed in this host's tools directory, the endpoint each is pointed at (no
// key, only whether one is set), whether the operator's policy allows it, the hosts its sandbox may reach,
// and its latest smoke test, run by a worker (activities/makers/agent-check.ts).

export const agentCheckSchema = z.object({
  /** The worker's host that ran it. */
  host: z.string(),
  /** What the CLI's --version printed there; null when it did not run. */
  version: z.string().nullable(),
  ok: z.boolean(),
  outcome: z.string(),
  explanation: z.string(),
  model: z.string().nullable(),
  promptTokens: z.number().int().nullable(),
  completionTokens: z.number().int().nullable(),
  latencyMs: z.number().int(),
  checkedAt: z.string(),
});

export const agentSchema = z.object({
  backend: z.enum(PRESET_BACKENDS),
  registry: z.enum(['npm', 'pypi']),
  package: z.string(),
  pinnedVersion: z.string(),
  /** In this host's AGENT_TOOLS_DIR (npm run agents:install); null: not installed there. */
  installedVersion: z.string().nullable(),
  /** <PREFIX>_BASE_URL and _MODEL as configured here (null: the CLI's default); the key is never shown. */
  endpoint: z
    .object({ baseUrl: z.string().nullable(), model: z.string().nullable(), apiKeySet: z.boolean() })
    .nullable(),
  /** Whether the operator's allowedMakerBackends lets a loop use it. */
  allowed: z.boolean(),
  /** The hosts its agents' sandbox may reach (the policy's agentNetwork for it, else SANDBOX_EGRESS_AGENTS). */
  network: z.array(z.string()).nullable(),
  lastCheck: agentCheckSchema.nullable(),
});
export type AgentView = z.infer<typeof agentSchema>;

export async function agentInventory(
  prisma: AgentCheckDb,
  policy: ApiPolicy,
  backends: readonly PresetBackend[] = PRESET_BACKENDS,
): Promise<AgentView[]> {
  const checks = new Map((await latestAgentChecks(prisma)).map((c) => [c.backend, c]));
  const allowedBackends = policy.operator?.allowedMakerBackends;
  return backends.map((backend) => {
    const pin = AGENT_TOOL_PINS[backend];
    const endpoint = policy.agents?.endpoints[backend];
    const check = checks.get(backend);
    return {
      backend,
      registry: pin.registry,
      package: pin.package,
      pinnedVersion: pin.version,
      installedVersion: policy.agents ? installedVersion(policy.agents.toolsDir, backend) : null,
      endpoint: endpoint
        ? { baseUrl: endpoint.baseUrl, model: endpoint.model, apiKeySet: endpoint.apiKey !== null }
        : null,
      allowed: allowedBackends === undefined || allowedBackends.includes(backend),
      network: policy.agents
        ? agentAllowList(policy.operator ?? {}, policy.agents.egress, backend).map(formatEgressEntry)
        : null,
      lastCheck: check
        ? {
            host: check.host,
            version: check.version,
            ok: check.ok,
            outcome: check.outcome,
            explanation: check.explanation,
            model: check.model,
            promptTokens: check.promptTokens,
            completionTokens: check.completionTokens,
            latencyMs: check.latencyMs,
            checkedAt: check.checkedAt.toISOString(),
          }
        : null,
    };
  });
}
