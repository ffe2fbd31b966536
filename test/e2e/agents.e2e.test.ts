import fs from 'node:fs';
import path from 'node:path';
import { cleanLedger, blockerLedger } from '../support/fake-llm-server';
import { startFakeProviderServer, type FakeProviderServer } from '../support/fake-provider-server';
import { CORRECT_SUM, createFixtureRepo } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { sharedTestDir } from '../support/sandbox';

// Makers people run, through the whole loop: a coding-agent CLI preset (a fake `claude` that behaves
// like the real one) and the built-in tool-using agent over the Anthropic Messages wire format; the
// reviewer's provider failing; and what every call cost, recorded.

let h: LoopHarness;
let anthropic: FakeProviderServer;
beforeAll(async () => {
  anthropic = await startFakeProviderServer();
  h = await startLoopHarness({
    workerEnv: {
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      ANTHROPIC_API_KEY: 'anthropic-test-key',
      // Claude Code logs in with this key; the operator hands it to agents, and only to agents.
      AGENT_CREDENTIALS: 'ANTHROPIC_API_KEY',
      LLM_PRICES: JSON.stringify({ 'scripted-reviewer': { input: 1000, output: 1000 } }),
    },
  });
});
afterAll(async () => {
  await h?.close();
  await anthropic?.close();
});

/** A `claude` stand-in: the fake CLI behind a wrapper that tells it what to do (agents get an allow-listed env). */
function fakeClaude(script: Record<string, unknown>): string {
  const dir = sharedTestDir('fake-claude-');
  const scriptFile = path.join(dir, 'script.json');
  fs.writeFileSync(scriptFile, JSON.stringify(script));
  const wrapper = path.join(dir, 'claude');
  const fake = path.resolve(__dirname, '../fixtures/agents/fake-claude');
  fs.writeFileSync(
    wrapper,
    `#!/bin/sh\nFAKE_AGENT_SCRIPT='${scriptFile}' exec '${process.execPath}' '${fake}' "$@"\n`,
    { mode: 0o755 },
  );
  return wrapper;
}

test('the Claude Code preset edits the workspace and its own usage and cost are recorded', async () => {
  const repo = createFixtureRepo();
  const recordFile = path.join(sharedTestDir('claude-record-'), 'record.json');
  const binaryPath = fakeClaude({
    record: recordFile,
    write: { 'src/sum.js': CORRECT_SUM },
    result: 'Fixed sum().',
    usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.0421, model: 'claude-sonnet-4-5' },
  });
  h.llm.enqueue({ content: cleanLedger });
  const body = loopRequest(repo, [], { maker: { backend: 'claude-code', binaryPath, timeoutSeconds: 120 } });
  const submitted = await h.request('POST', '/v1/loops', body);
  expect(submitted.status).toBe(201);
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  const maker = await h.db.prisma.executionRecord.findFirstOrThrow({ where: { loopId: loop.id, role: 'maker' } });
  expect(maker).toMatchObject({
    kind: 'AGENT_PROCESS',
    provider: 'claude-code',
    model: 'claude-sonnet-4-5',
    completionTokens: 300,
    costUsd: 0.0421,
    outcome: 'EXIT_0',
  });
  expect(maker.promptTokens).toBeGreaterThanOrEqual(1200);
  expect(maker.responseId).toEqual(expect.any(String));
  expect(maker.pid).toEqual(expect.any(Number));
  // The agent got its own credential, its private HOME, and none of the service's other secrets.
  const seen = JSON.parse(fs.readFileSync(recordFile, 'utf8')).env;
  expect(seen).toMatchObject({ ANTHROPIC_API_KEY: 'anthropic-test-key' });
  // A home of its own in the iteration's control directory (outside /tmp), with a git identity.
  expect(seen.HOME).toMatch(/\/control\/[^/]+\/1\/agent\/home$/);
  expect(seen).not.toHaveProperty('LLM_API_KEY');
  expect(seen).not.toHaveProperty('DATABASE_URL');
});

test('the built-in agent works through Anthropic tool calls, confined to the workspace, every call recorded', async () => {
  const repo = createFixtureRepo();
  anthropic.enqueue(
    { kind: 'tools', calls: [{ name: 'read_file', input: { path: 'src/sum.js' } }] },
    { kind: 'tools', calls: [{ name: 'write_file', input: { path: '../outside.js', content: 'x' } }] },
    { kind: 'tools', calls: [{ name: 'replace_in_file', input: { path: 'src/sum.js', old: 'a - b', new: 'a + b' } }] },
    { kind: 'tools', calls: [{ name: 'run_command', input: { argv: ['node', '--test'] } }] },
    { kind: 'text', text: 'sum() now adds; the tests pass.' },
  );
  h.llm.enqueue({ content: cleanLedger });
  const body = loopRequest(repo, [], {
    maker: { backend: 'llm', provider: 'anthropic', model: 'claude-test', maxSteps: 10, timeoutSeconds: 300 },
  });
  const submitted = await h.request('POST', '/v1/loops', body);
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  expect(loop.iterations[0].changedFiles).toEqual(['src/sum.js']);
  expect(fs.existsSync(path.join(path.dirname(repo), 'outside.js'))).toBe(false);

  const records = await h.db.prisma.executionRecord.findMany({
    where: { loopId: loop.id, role: 'maker' },
    orderBy: { createdAt: 'asc' },
  });
  const calls = records.filter((r) => r.kind === 'MODEL_CALL');
  expect(calls).toHaveLength(5);
  expect(
    calls.every(
      (c) =>
        c.provider === 'anthropic' &&
        c.model === 'claude-test' &&
        /^msg_/.test(c.responseId ?? '') &&
        c.promptTokens! > 0,
    ),
  ).toBe(true);
  const session = records.find((r) => r.kind === 'AGENT_SESSION')!;
  expect(session).toMatchObject({ provider: 'built-in/anthropic', outcome: 'COMPLETED' });
  expect(session.detail).toMatch(/refused write_file/);
  expect(anthropic.requests[0]!.headers['x-api-key']).toBe('anthropic-test-key');
});

test('the reviewer can be a coding-agent CLI, run on a disposable checkout; the report says so from its record', async () => {
  const repo = createFixtureRepo();
  const maker = fakeClaude({
    write: { 'src/sum.js': CORRECT_SUM },
    usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.001, model: 'm' },
  });
  const reviewer = fakeClaude({
    write: { 'REVIEWER_WAS_HERE.txt': 'must not reach the loop' },
    result: cleanLedger,
    usage: { inputTokens: 900, outputTokens: 40, costUsd: 0.02, model: 'claude-reviewer' },
  });
  const body = loopRequest(repo, [], {
    maker: { backend: 'claude-code', binaryPath: maker },
    reviewer: { backend: 'agent', agent: { backend: 'claude-code', binaryPath: reviewer } },
  });
  const before = h.llm.requests.length;
  const submitted = await h.request('POST', '/v1/loops', body);
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  expect(h.llm.requests.length).toBe(before);
  expect(loop.iterations[0].changedFiles).toEqual(['src/sum.js']);
  const review = await h.db.prisma.executionRecord.findFirstOrThrow({ where: { loopId: loop.id, role: 'reviewer' } });
  expect(review).toMatchObject({
    kind: 'AGENT_PROCESS',
    provider: 'claude-code',
    model: 'claude-reviewer',
    outcome: 'VALID_LEDGER',
    costUsd: 0.02,
  });
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.body.reviewMode).toMatch(/^independent agent review \(claude-code, pid \d+, session /);
});

test('a reviewer endpoint refusing the key (401) is not retried and escalates with the reason', async () => {
  const repo = createFixtureRepo();
  const binaryPath = fakeClaude({
    write: { 'src/sum.js': CORRECT_SUM },
    usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.001, model: 'm' },
  });
  const before = h.llm.requests.length;
  h.llm.enqueue({ status: 401, body: { error: { message: 'invalid api key' } } });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, [], { maker: { backend: 'claude-code', binaryPath } }),
  );
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.escalations[0].trigger).toBe('REVIEW_UNAVAILABLE');
  expect(h.llm.requests.length - before).toBe(1);
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.body.coreBlocker).toContain('HTTP 401');
});

test('a rate-limited reviewer (429) is retried with backoff by the activity and the loop passes', async () => {
  const repo = createFixtureRepo();
  const binaryPath = fakeClaude({
    write: { 'src/sum.js': CORRECT_SUM },
    usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.001, model: 'm' },
  });
  h.llm.enqueue({ status: 429, body: { error: { message: 'slow down' } } }, { content: cleanLedger });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, [], { maker: { backend: 'claude-code', binaryPath } }),
  );
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('PASSED');
  const reviewer = await h.db.prisma.executionRecord.findMany({
    where: { loopId: loop.id, role: 'reviewer' },
    orderBy: { createdAt: 'asc' },
  });
  expect(reviewer.map((r) => r.outcome)).toEqual(['HTTP_429', 'VALID_LEDGER']);
});

test('the cost budget, fed by agent-reported cost and priced model calls, escalates when reached', async () => {
  const repo = createFixtureRepo();
  const binaryPath = fakeClaude({
    write: { 'src/sum.js': CORRECT_SUM },
    usage: { inputTokens: 100, outputTokens: 50, costUsd: 0.5, model: 'm' },
  });
  h.llm.enqueue({ content: blockerLedger() });
  const body = loopRequest(repo, [], { maker: { backend: 'claude-code', binaryPath }, budget: { maxCostUsd: 0.4 } });
  const submitted = await h.request('POST', '/v1/loops', body);
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.escalations[0].trigger).toBe('BUDGET_EXHAUSTED');
  // The review was skipped: the maker alone had spent the budget.
  expect(await h.db.prisma.executionRecord.count({ where: { loopId: loop.id, role: 'reviewer' } })).toBe(0);
  h.llm.requests.length = 0;
});
