import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PRESET_BACKENDS } from '../../domain/maker-presets';
import { requireBuiltCli, runCliProcess } from '../support/cli-process';
import { recordHistory } from '../support/histories';
import { cleanLedger } from '../support/fake-llm-server';
import {
  presetEndpointsEnv,
  startFakeProviderServer,
  type FakeProviderServer,
  type RecordedProviderRequest,
} from '../support/fake-provider-server';
import { createFixtureRepo } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// The maker presets with the real coding-agent CLIs, installed from the registries at the versions pinned
// in config/agent-tools.json (scripts/install-agents.sh), each against a scripted model server speaking
// its own wire format: Claude Code over Anthropic Messages (SSE, tool_use), Codex over the Responses API
// (SSE, function calls), Aider over Chat Completions (its edit formats), Gemini CLI over the Gemini API (SSE,
// function calls). The operator's settings are the
// documented ones (docs/agents.md): one endpoint, key and model per preset, and the operator policy's
// network allow-list per preset — the only way to the model server, as SANDBOX_EGRESS_AGENTS names another host.

let h: LoopHarness;
let model: FakeProviderServer;
let modelHost: string;
let home: string;
beforeAll(async () => {
  requireBuiltCli();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-home-'));
  model = await startFakeProviderServer();
  modelHost = new URL(model.baseUrl).host;
  const agentNetwork = Object.fromEntries(PRESET_BACKENDS.map((b) => [b, [modelHost]]));
  h = await startLoopHarness({
    workerEnv: {
      ...presetEndpointsEnv(model),
      SANDBOX_EGRESS_AGENTS: 'example.invalid',
      OPERATOR_POLICY: JSON.stringify({ agentNetwork }),
    },
    policy: 'worker',
  });
});
afterAll(async () => {
  await h?.close();
  await model?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

/** The workspace the CLI runs in, as Claude Code states it in its system prompt. */
function claudeWorkingDirectory(request: RecordedProviderRequest): string {
  const match = /Primary working directory: ([^\s\\]+)/.exec(JSON.stringify(request.body));
  if (!match) throw new Error('no working directory in the request');
  return match[1]!;
}

async function passes(backend: string): Promise<any> {
  h.llm.enqueue({ content: cleanLedger });
  const id = await h.submit(
    loopRequest(createFixtureRepo(), [], { maker: { backend, timeoutSeconds: 180 } as never, maxIterations: 1 }),
  );
  const loop = await h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  // Nothing but the model API: no update check, telemetry or price-list download knocked on the egress proxy.
  const refused = await h.db.prisma.executionRecord.findMany({ where: { loopId: id, kind: 'EGRESS' } });
  expect(refused.map((r) => `${r.provider} ${r.detail}`)).toEqual([]);
  return loop;
}

test('claude-code: the real CLI reads, edits, runs the gate command and PASSes; usage from every model', async () => {
  const file = (r: RecordedProviderRequest) => `${claudeWorkingDirectory(r)}/src/sum.js`;
  const before = model.requests.length;
  model.enqueue(
    { kind: 'tools', calls: [{ name: 'Read', input: (r: RecordedProviderRequest) => ({ file_path: file(r) }) }] },
    {
      kind: 'tools',
      calls: [
        {
          name: 'Edit',
          input: (r: RecordedProviderRequest) => ({ file_path: file(r), old_string: 'a - b', new_string: 'a + b' }),
        },
      ],
    },
    { kind: 'tools', calls: [{ name: 'Bash', input: { command: 'node --test', description: 'run the tests' } }] },
    { kind: 'text', text: 'sum() adds now; node --test passes.' },
  );
  const loop = await passes('claude-code');
  expect(loop.status).toBe('PASSED');
  const calls = model.requests.slice(before);
  expect(calls.map((c) => c.path.split('?')[0])).toEqual(Array(4).fill('/v1/messages'));
  expect(calls[0]!.headers['x-api-key']).toBe('claude-code-test-key');
  expect(calls[0]!.body.model).toBe('scripted-claude');
  // The gate command ran inside the agent: its result went back to the model, not a permission denial.
  const bashResult = JSON.stringify(calls[3]!.body.messages.at(-1));
  expect(bashResult).toMatch(/pass 2/);
  expect(bashResult).not.toMatch(/permission|denied/i);
  const maker = await h.db.prisma.executionRecord.findFirstOrThrow({
    where: { loopId: loop.id, role: 'maker', kind: 'AGENT_PROCESS' },
  });
  expect(maker).toMatchObject({ kind: 'AGENT_PROCESS', provider: 'claude-code', model: 'scripted-claude' });
  expect(maker.outcome).toBe('EXIT_0');
  expect(maker.promptTokens).toBeGreaterThan(400);
  expect(maker.completionTokens).toBeGreaterThan(0);
}, 240_000);

test('codex: the real CLI runs its shell tool in our sandbox and PASSes, usage recorded', async () => {
  const before = model.requests.length;
  model.enqueue(
    {
      kind: 'tools',
      calls: [{ name: 'exec_command', input: { cmd: "sed -i 's/a - b/a + b/' src/sum.js && node --test" } }],
    },
    { kind: 'text', text: 'Fixed sum(); the tests pass.' },
  );
  const loop = await passes('codex');
  expect(loop.status).toBe('PASSED');
  const calls = model.requests.slice(before);
  expect(calls.map((c) => c.path)).toEqual(['/v1/responses', '/v1/responses']);
  expect(calls[0]!.headers.authorization).toBe('Bearer codex-test-key');
  expect(calls[0]!.body.model).toBe('scripted-codex');
  expect(JSON.stringify(calls[1]!.body.input)).toMatch(/pass 2/);
  const maker = await h.db.prisma.executionRecord.findFirstOrThrow({
    where: { loopId: loop.id, role: 'maker', kind: 'AGENT_PROCESS' },
  });
  expect(maker).toMatchObject({ kind: 'AGENT_PROCESS', provider: 'codex', outcome: 'EXIT_0' });
  expect(maker.promptTokens).toBeGreaterThan(0);
  expect(maker.completionTokens).toBeGreaterThan(0);
}, 240_000);

test('aider: the real CLI applies its edit format with git on and PASSes, usage recorded', async () => {
  const before = model.requests.length;
  const fixed = 'exports.sum = (a, b) => a + b;';
  // A model aider does not know gets its "whole" edit format: the file's new content, fenced, after its path.
  const listing = { kind: 'text' as const, text: `src/sum.js\n\`\`\`\n${fixed}\n\`\`\`\n` };
  // The file is not in aider's chat yet: it adds it (--yes-always) and asks the model again.
  model.enqueue(listing, listing);
  const loop = await passes('aider');
  expect(loop.status).toBe('PASSED');
  expect(loop.iterations[0].changedFiles).toEqual(['src/sum.js']);
  const calls = model.requests.slice(before);
  expect(calls[0]!.path).toBe('/v1/chat/completions');
  expect(calls[0]!.headers.authorization).toBe('Bearer aider-test-key');
  const maker = await h.db.prisma.executionRecord.findFirstOrThrow({
    where: { loopId: loop.id, role: 'maker', kind: 'AGENT_PROCESS' },
  });
  expect(maker).toMatchObject({ kind: 'AGENT_PROCESS', provider: 'aider', outcome: 'EXIT_0' });
  expect(maker.promptTokens).toBeGreaterThan(0);
}, 240_000);

test('gemini: the real CLI runs its shell tool in our sandbox and PASSes, usage recorded', async () => {
  const before = model.requests.length;
  model.enqueue(
    {
      kind: 'tools',
      calls: [
        {
          name: 'run_shell_command',
          input: { command: "sed -i 's/a - b/a + b/' src/sum.js && node --test", description: 'fix and test' },
        },
      ],
    },
    { kind: 'text', text: 'Fixed sum(); the tests pass.' },
  );
  const loop = await passes('gemini');
  expect(loop.status).toBe('PASSED');
  const calls = model.requests.slice(before);
  expect(calls.map((c) => c.path)).toEqual(
    Array(2).fill('/v1beta/models/scripted-gemini:streamGenerateContent?alt=sse'),
  );
  expect(calls[0]!.headers['x-goog-api-key']).toBe('gemini-test-key');
  // The shell tool's result went back to the model.
  expect(JSON.stringify(calls[1]!.body.contents.at(-1))).toMatch(/pass 2/);
  const maker = await h.db.prisma.executionRecord.findFirstOrThrow({
    where: { loopId: loop.id, role: 'maker', kind: 'AGENT_PROCESS' },
  });
  expect(maker).toMatchObject({ provider: 'gemini', model: 'scripted-gemini', outcome: 'EXIT_0' });
  expect(maker.promptTokens).toBeGreaterThan(0);
  expect(maker.completionTokens).toBeGreaterThan(0);
  recordHistory(loop.workflowId, 'gemini-preset-pass');
}, 240_000);

test('agents: GET /v1/agents lists the installed pins; `engineering-loop agents --check` smoke-tests each real CLI', async () => {
  const listed = await h.request('GET', '/v1/agents');
  expect(listed.status).toBe(200);
  expect(listed.body.agents.map((a: any) => a.backend)).toEqual([...PRESET_BACKENDS]);
  for (const agent of listed.body.agents) {
    expect(agent.installedVersion).toBe(agent.pinnedVersion);
    expect(agent).toMatchObject({ allowed: true, network: [modelHost], endpoint: { apiKeySet: true } });
  }
  const before = model.requests.length;
  // One text turn each (they run at once, so any may take any); spares for a CLI that asks twice.
  model.enqueue(...Array(8).fill({ kind: 'text', text: 'OK' }));
  const run = await runCliProcess(['agents', '--check'], home, {
    ENGINEERING_LOOP_URL: h.baseUrl,
    ENGINEERING_LOOP_API_KEY: h.keys.admin,
  });
  model.reset();
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  for (const backend of PRESET_BACKENDS) expect(run.stdout).toMatch(new RegExp(`^${backend} .* ok `, 'm'));
  const paths = model.requests.slice(before).map((r) => r.path.split('?')[0]);
  expect(new Set(paths)).toEqual(
    new Set([
      '/v1/messages',
      '/v1/responses',
      '/v1/chat/completions',
      '/v1beta/models/scripted-gemini:streamGenerateContent',
    ]),
  );
  const checked = (await h.request('GET', '/v1/agents')).body.agents;
  for (const agent of checked) {
    expect(agent.lastCheck).toMatchObject({ ok: true, outcome: 'EXIT_0' });
    expect(agent.lastCheck.version).toContain(agent.pinnedVersion);
  }
  const ready = await h.request('GET', '/readyz');
  expect(ready.body.agents).toEqual(
    checked.map((a: any) => ({
      backend: a.backend,
      installedVersion: a.pinnedVersion,
      lastCheck: { ok: true, version: a.lastCheck.version, checkedAt: a.lastCheck.checkedAt },
    })),
  );
}, 300_000);
