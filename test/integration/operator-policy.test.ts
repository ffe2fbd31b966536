import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { DEFAULT_API_POLICY } from '../../api/deps';
import { createApiKey, type CreatedApiKey } from '../../api/auth/api-keys';
import { loadConfig, ConfigError } from '../../config/service-config';
import type { OperatorPolicy } from '../../domain/operator-policy';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { loopRequest } from '../support/loop-request';
import { recordingTemporal } from '../support/recording-temporal';

// The operator's ceilings at the API: GET /v1/policy shows them; a request above one is refused with 400
// naming the field and the ceiling, before anything is stored or started; a budget left out takes the
// ceiling. Real PostgreSQL and HTTP; the Temporal client only records starts.

const POLICY: OperatorPolicy = {
  maxIterations: 3,
  maxMakerTimeoutSeconds: 600,
  maxGateTimeoutSeconds: 300,
  maxReviewerTimeoutSeconds: 300,
  maxCostUsdPerLoop: 3,
  allowedMakerBackends: ['command', 'claude-code'],
  allowedModels: ['claude-sonnet-4-5', 'gpt-4.1'],
};

let db: TestDatabase;
let app: FastifyInstance;
let submitter: CreatedApiKey;
let base: string;
const started: unknown[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  submitter = await createApiKey(db.prisma, { name: 'sam', role: 'submitter' });
  app = await buildApp({
    prisma: db.prisma,
    temporal: recordingTemporal(started),
    taskQueue: 'q',
    logLevel: 'silent',
    policy: { ...DEFAULT_API_POLICY, operator: POLICY },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('app is not listening');
  base = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${submitter.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

test('GET /v1/policy shows the ceilings in force', async () => {
  expect(await call('GET', '/v1/policy')).toEqual({ status: 200, body: POLICY });
});

test.each([
  [{ maxIterations: 4 }, "body.maxIterations: 4 is above the operator's ceiling maxIterations = 3"],
  [
    { maker: { backend: 'command', argv: ['x'], timeoutSeconds: 601 } },
    "body.maker.timeoutSeconds: 601 is above the operator's ceiling maxMakerTimeoutSeconds = 600",
  ],
  [
    { gates: [{ gate: 'tests', argv: ['node', '--test'], timeoutSeconds: 301 }] },
    'body.gates.0.timeoutSeconds: 301 is above',
  ],
  [
    { reviewer: { backend: 'agent', agent: { backend: 'command', argv: ['r'], timeoutSeconds: 900 } } },
    'body.reviewer.agent.timeoutSeconds: 900 is above',
  ],
  [{ budget: { maxCostUsd: 5 } }, "body.budget.maxCostUsd: 5 is above the operator's ceiling maxCostUsdPerLoop = 3"],
  [
    { maker: { backend: 'codex', timeoutSeconds: 300 } },
    'body.maker.backend: "codex" is not among the operator\'s allowedMakerBackends (command, claude-code)',
  ],
  [
    { maker: { backend: 'claude-code', model: 'opus-x', timeoutSeconds: 300 } },
    'body.maker.model: "opus-x" is not among the operator\'s allowedModels',
  ],
  [{ reviewer: { model: 'cheap-model' } }, 'body.reviewer.model: "cheap-model" is not among'],
])('a request above a ceiling is refused with 400 naming the field: %j', async (overrides, message) => {
  const before = await db.prisma.loop.count();
  const answer = await call(
    'POST',
    '/v1/loops',
    loopRequest('https://example.invalid/r.git', ['x'], overrides as never),
  );
  expect(answer.status).toBe(400);
  expect(answer.body.message).toContain(message);
  expect(await db.prisma.loop.count()).toBe(before);
});

test('a request within the ceilings starts, and a budget left out takes the ceiling', async () => {
  const answer = await call(
    'POST',
    '/v1/loops',
    loopRequest('https://example.invalid/r.git', ['x'], { maxIterations: 3 }),
  );
  expect([answer.status, answer.body.message]).toEqual([201, undefined]);
  expect((started.at(-1) as { args: [{ request: { budget: unknown } }] }).args[0].request.budget).toEqual({
    maxCostUsd: 3,
  });
});

test('the policy comes from OPERATOR_POLICY; a bad one stops the service naming the field', () => {
  expect(loadConfig({ OPERATOR_POLICY: JSON.stringify({ maxIterations: 2 }) }).operatorPolicy).toEqual({
    maxIterations: 2,
  });
  expect(loadConfig({}).operatorPolicy).toEqual({});
  expect(() => loadConfig({ OPERATOR_POLICY: '{"maxIterations":0}' })).toThrow(ConfigError);
  expect(() => loadConfig({ OPERATOR_POLICY: '{"maxIteration":2}' })).toThrow(/OPERATOR_POLICY: .*maxIteration/);
});
