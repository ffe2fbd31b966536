import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { createApiKey } from '../../api/auth/api-keys';
import { DEFAULT_API_POLICY } from '../../api/deps';
import { AGENT_TOOL_PINS } from '../../config/agent-tools';
import { parseEgressList } from '../../domain/egress';
import { insertAgentCheck } from '../../store/agent-checks';
import { useTestDatabase } from '../support/database';

// GET /v1/agents and POST /v1/agents/checks against real PostgreSQL and Temporal, without a worker: the
// listing reads the tools directory, the configuration and the stored checks; a check with no worker to run
// it is refused at once. The checks themselves run with the real CLIs in test/e2e/agent-clis.e2e.test.ts.

const db = useTestDatabase();
let app: FastifyInstance;
let connection: Connection;
let baseUrl: string;
let admin: string;
let tools: string;

beforeAll(async () => {
  tools = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-tools-'));
  const codex = path.join(tools, 'npm', 'node_modules', AGENT_TOOL_PINS.codex.package);
  fs.mkdirSync(codex, { recursive: true });
  fs.writeFileSync(path.join(codex, 'package.json'), JSON.stringify({ version: AGENT_TOOL_PINS.codex.version }));
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  const endpoint = { baseUrl: null, apiKey: null, model: null };
  app = await buildApp({
    prisma: db.prisma,
    temporal: new Client({ connection }),
    taskQueue: `unpolled-${Date.now()}`,
    logLevel: 'error',
    policy: {
      ...DEFAULT_API_POLICY,
      operator: { allowedMakerBackends: ['codex', 'llm'], agentNetwork: { codex: ['models.internal:8443'] } },
      agents: {
        toolsDir: tools,
        endpoints: {
          'claude-code': endpoint,
          codex: { baseUrl: 'http://models.internal:8443/v1', apiKey: 'sk-codex', model: 'gpt-x' },
          aider: endpoint,
          gemini: endpoint,
        },
        egress: parseEgressList('api.anthropic.com'),
      },
    },
  });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  admin = (await createApiKey(db.prisma, { name: 'admin', role: 'admin' })).key;
});
afterAll(async () => {
  await app?.close();
  await connection?.close();
  fs.rmSync(tools, { recursive: true, force: true });
});

const call = async (method: string, url: string, body?: unknown) => {
  const answer = await fetch(`${baseUrl}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${admin}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: answer.status, body: (await answer.json()) as any };
};

test('the listing: pins, what is installed here, endpoint without its key, policy, allow-list, the latest check', async () => {
  const check = { host: 'w1', ok: false, explanation: 'codex exited with code 1.', latencyMs: 900 };
  await insertAgentCheck(db.prisma, {
    ...check,
    backend: 'codex',
    version: null,
    outcome: 'EXIT_1',
    model: null,
    promptTokens: null,
    completionTokens: null,
  });
  await insertAgentCheck(db.prisma, {
    ...check,
    backend: 'codex',
    ok: true,
    version: 'codex-cli 0.169.1',
    outcome: 'EXIT_0',
    explanation: 'codex exited 0.',
    model: 'gpt-x',
    promptTokens: 12,
    completionTokens: 1,
  });
  const { status, body } = await call('GET', '/v1/agents');
  expect(status).toBe(200);
  const [claude, codex, aider, gemini] = body.agents;
  expect(codex).toEqual({
    backend: 'codex',
    registry: 'npm',
    package: '@openai/codex',
    pinnedVersion: AGENT_TOOL_PINS.codex.version,
    installedVersion: AGENT_TOOL_PINS.codex.version,
    endpoint: { baseUrl: 'http://models.internal:8443/v1', model: 'gpt-x', apiKeySet: true },
    allowed: true,
    network: ['models.internal:8443'],
    lastCheck: expect.objectContaining({ ok: true, outcome: 'EXIT_0', version: 'codex-cli 0.169.1', promptTokens: 12 }),
  });
  expect(JSON.stringify(body)).not.toContain('sk-codex');
  expect(claude).toMatchObject({
    installedVersion: null,
    allowed: false,
    network: ['api.anthropic.com'],
    lastCheck: null,
  });
  expect([aider.backend, gemini.backend]).toEqual(['aider', 'gemini']);
  const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.json() as Promise<any>);
  expect(ready.agents[1]).toEqual({
    backend: 'codex',
    installedVersion: AGENT_TOOL_PINS.codex.version,
    lastCheck: { ok: true, version: 'codex-cli 0.169.1', checkedAt: codex.lastCheck.checkedAt },
  });
});

test('a check with no worker on the task queue is refused at once (503), an unknown preset with 400', async () => {
  const refused = await call('POST', '/v1/agents/checks', { backends: ['codex'] });
  expect(refused.status).toBe(503);
  expect(refused.body.message).toMatch(/^no worker polls task queue unpolled-\d+ for workflow or activity tasks/);
  const unknown = await call('POST', '/v1/agents/checks', { backends: ['cursor'] });
  expect(unknown.status).toBe(400);
  expect(unknown.body.message).toContain('body.backends.0');
});
