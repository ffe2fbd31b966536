import { proxyActivities } from '@temporalio/workflow';
import type { AgentCheckActivities } from '../activities';
import type { AgentCheckResult } from '../activities/makers/agent-check';
import type { PresetBackend } from '../domain/maker-presets';

// Smoke tests of the coding-agent presets, on a worker (where the CLIs, the sandbox and the egress proxy
// are), started by POST /v1/agents/checks; each check records itself (store/agent-checks.ts). One attempt
// more if a worker is lost meanwhile; a check that ran and failed is a result, not an error.

const checks = proxyActivities<AgentCheckActivities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '30s',
  retry: { maximumAttempts: 2 },
});

export async function agentChecks(input: { backends: PresetBackend[] }): Promise<AgentCheckResult[]> {
  return Promise.all(input.backends.map((backend) => checks.checkAgent({ backend })));
}
