import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentEgress } from '../../activities/makers/agent-egress';
import { AGENT_TOOL_PINS, installedVersion } from '../../config/agent-tools';
import { agentTable } from '../../cli/render/agents';
import type { AgentView } from '../../cli/api-types';
import { formatEgressEntry, parseEgressList } from '../../domain/egress';
import { PRESET_BACKENDS } from '../../domain/maker-presets';
import { operatorPolicySchema } from '../../domain/operator-policy';

// What GET /v1/agents, /readyz and `engineering-loop agents` are made of, and the per-preset allow-list of the
// operator policy. The e2e tier runs the same with the real CLIs (test/e2e/agent-clis.e2e.test.ts).

test('every preset has a pin; installed versions come from the npm manifest or the venv dist-info', () => {
  expect(Object.keys(AGENT_TOOL_PINS).sort()).toEqual([...PRESET_BACKENDS].sort());
  const tools = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-tools-'));
  try {
    expect(installedVersion(tools, 'claude-code')).toBeNull();
    expect(installedVersion(tools, 'aider')).toBeNull();
    const manifest = path.join(tools, 'npm', 'node_modules', AGENT_TOOL_PINS['claude-code'].package);
    fs.mkdirSync(manifest, { recursive: true });
    fs.writeFileSync(path.join(manifest, 'package.json'), JSON.stringify({ version: '9.8.7' }));
    expect(installedVersion(tools, 'claude-code')).toBe('9.8.7');
    // aider-chat installs as aider_chat-<version>.dist-info.
    fs.mkdirSync(path.join(tools, 'aider', 'lib', 'python3.11', 'site-packages', 'aider_chat-0.1.2.dist-info'), {
      recursive: true,
    });
    expect(installedVersion(tools, 'aider')).toBe('0.1.2');
  } finally {
    fs.rmSync(tools, { recursive: true, force: true });
  }
});

test("a preset's agents reach the policy's hosts for it in place of SANDBOX_EGRESS_AGENTS; a request narrows either", () => {
  const config = {
    sandbox: { egress: { agents: parseEgressList('api.anthropic.com,api.openai.com'), setup: [], gates: [] } },
    operatorPolicy: operatorPolicySchema.parse({ agentNetwork: { codex: ['models.internal:8443'], aider: [] } }),
  } as never;
  const hosts = (settings: { backend: string; network?: boolean | string[] }) =>
    agentEgress(config, settings)?.map(formatEgressEntry) ?? null;
  expect(hosts({ backend: 'codex' })).toEqual(['models.internal:8443']);
  expect(hosts({ backend: 'aider' })).toEqual([]);
  expect(hosts({ backend: 'claude-code' })).toEqual(['api.anthropic.com', 'api.openai.com']);
  expect(hosts({ backend: 'claude-code', network: ['api.anthropic.com'] })).toEqual(['api.anthropic.com']);
  // Narrowing cannot widen: a host outside the preset's list is dropped.
  expect(hosts({ backend: 'codex', network: ['api.openai.com'] })).toEqual([]);
  expect(hosts({ backend: 'codex', network: false })).toBeNull();
  // A command maker has no preset: the operator's list for agents, only when it asks for network.
  expect(hosts({ backend: 'command' })).toBeNull();
  expect(hosts({ backend: 'command', network: true })).toEqual(['api.anthropic.com', 'api.openai.com']);
});

test('the policy refuses an allow-list entry that is not a host, and a preset it does not know', () => {
  const bad = operatorPolicySchema.safeParse({ agentNetwork: { codex: ['http://x.org'] } });
  expect(bad.success).toBe(false);
  expect(bad.error?.issues[0]).toMatchObject({
    path: ['agentNetwork', 'codex', 0],
    message: '"http://x.org" is not a host, host:port or *.domain',
  });
  expect(operatorPolicySchema.safeParse({ agentNetwork: { cursor: ['x.org'] } }).success).toBe(false);
});

test('agents table: versions, endpoint, policy and the latest check; why a failed check failed', () => {
  const agent = (backend: string, lastCheck: AgentView['lastCheck']): AgentView => ({
    backend,
    package: `pkg-${backend}`,
    pinnedVersion: '1.0.0',
    installedVersion: backend === 'aider' ? null : '1.0.0',
    endpoint: { baseUrl: 'http://models:4000/v1', model: 'm', apiKeySet: backend !== 'codex' },
    allowed: backend !== 'aider',
    network: ['models:4000'],
    lastCheck,
  });
  const check = (ok: boolean, explanation: string) => ({
    host: 'w1',
    version: '1.0.0',
    ok,
    outcome: ok ? 'EXIT_0' : 'EXIT_1',
    explanation,
    latencyMs: 2400,
    checkedAt: '2026-12-03T09:00:00.000Z',
  });
  const text = agentTable([
    agent('claude-code', check(true, 'claude-code exited 0.')),
    agent('codex', check(false, 'codex exited with code 1; the model API answered HTTP 401.')),
    agent('aider', null),
  ]);
  expect(text.split('\n')).toEqual([
    expect.stringMatching(/^PRESET\s+PINNED\s+INSTALLED\s+ENDPOINT\s+ALLOWED\s+LAST CHECK$/),
    expect.stringMatching(
      /^claude-code\s+pkg-claude-code@1\.0\.0\s+1\.0\.0\s+http:\/\/models:4000\/v1 \(m\)\s+yes\s+ok 2\.4s/,
    ),
    expect.stringMatching(/^codex\s+.*\(m\), no key\s+yes\s+FAILED 2\.4s/),
    expect.stringMatching(/^aider\s+pkg-aider@1\.0\.0\s+not installed\s+.*\s+no\s+never checked$/),
    'codex: codex exited with code 1; the model API answered HTTP 401.',
  ]);
});
