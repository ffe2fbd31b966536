import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readPartialUsage } from '../../activities/makers/partial-usage';

// What an interrupted preset run had spent, from the session log its CLI keeps in the run's home. The lines
// are shaped as the pinned CLIs write them (captured from real runs through the service, trimmed to the
// fields read; the e2e tier reads a real one in test/e2e/agent-cli-failures.e2e.test.ts).

let state: string;
beforeEach(() => {
  state = fs.mkdtempSync(path.join(os.tmpdir(), 'partial-usage-'));
});
afterEach(() => fs.rmSync(state, { recursive: true, force: true }));

function write(relative: string, lines: Array<object | string>): void {
  const file = path.join(state, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'));
}

test('claude-code mid-run: each assistant message once, cache tokens as input', async () => {
  const answer = (id: string, input: number, output: number) => ({
    type: 'assistant',
    requestId: `req_${id}`,
    message: {
      id,
      model: 'claude-sonnet-4-5',
      usage: {
        input_tokens: input,
        cache_creation_input_tokens: 500,
        cache_read_input_tokens: 0,
        output_tokens: output,
      },
    },
  });
  write('home/.claude/projects/-ws/s-1.jsonl', [
    { type: 'user', message: { role: 'user', content: 'fix it' } },
    { type: 'api-request', id: 'r1' },
    answer('msg_1', 101, 20),
    answer('msg_1', 101, 20),
    { type: 'user', message: { role: 'user', content: [{ type: 'tool_result' }] } },
    answer('msg_2', 300, 40),
  ]);
  expect(await readPartialUsage('claude-code', state)).toMatchObject({
    model: 'claude-sonnet-4-5',
    promptTokens: 101 + 500 + 300 + 500,
    completionTokens: 60,
    costUsd: null,
  });
});

test('claude-code at its end: the last cost-state line, every model in it', async () => {
  const modelUsage = (input: number, output: number) => ({
    'claude-sonnet-4-5': { inputTokens: input, outputTokens: output, cacheReadInputTokens: 1000, costUSD: 0.02 },
    'claude-haiku-4-5': { inputTokens: 50, outputTokens: 5, costUSD: 0.0001 },
  });
  write('home/.claude/projects/-ws/s-1.jsonl', [
    { type: 'user', message: { role: 'user', content: 'fix it' } },
    { type: 'cost-state', totalCostUSD: 0.01, modelUsage: modelUsage(100, 10) },
    { type: 'cost-state', totalCostUSD: 0.0201, modelUsage: modelUsage(400, 40) },
    '{"type":"assistant","mess',
  ]);
  expect(await readPartialUsage('claude-code', state)).toMatchObject({
    model: 'claude-sonnet-4-5,claude-haiku-4-5',
    promptTokens: 400 + 1000 + 50,
    completionTokens: 45,
    costUsd: 0.0201,
  });
});

test('codex: the last token_count total and the turn model', async () => {
  write('home/.codex/sessions/2026/12/03/rollout-2026-12-03T09-00-00-x.jsonl', [
    { type: 'session_meta', payload: { id: 'x' } },
    { type: 'turn_context', payload: { model: 'gpt-5-codex' } },
    {
      type: 'event_msg',
      payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 900, output_tokens: 30 } } },
    },
    { type: 'event_msg', payload: { type: 'token_count', info: null } },
    {
      type: 'event_msg',
      payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 2000, output_tokens: 70 } } },
    },
  ]);
  expect(await readPartialUsage('codex', state)).toMatchObject({
    model: 'gpt-5-codex',
    promptTokens: 2000,
    completionTokens: 70,
    costUsd: null,
  });
  // When the CLI last wrote its log: it was alive then.
  const log = path.join(state, 'home/.codex/sessions/2026/12/03/rollout-2026-12-03T09-00-00-x.jsonl');
  expect((await readPartialUsage('codex', state))?.lastWrittenAt).toBe(fs.statSync(log).mtimeMs);
});

test('gemini: each model message once, the last copy of a rewritten one; thoughts as output', async () => {
  const reply = (id: string, input: number, output: number, thoughts = 0) => ({
    id,
    type: 'gemini',
    model: 'gemini-2.5-pro',
    tokens: { input, output, thoughts, cached: 0, tool: 0, total: input + output + thoughts },
  });
  write('home/.gemini/tmp/ws/chats/session-2026-12-03T09-00-abc.jsonl', [
    { sessionId: 's', kind: 'main' },
    { id: 'u1', type: 'user', content: [{ text: 'fix it' }] },
    reply('g1', 100, 5),
    { $set: { messages: [{ id: 'u1', type: 'user' }, reply('g1', 100, 5), reply('g2', 300, 10, 20)] } },
  ]);
  expect(await readPartialUsage('gemini', state)).toMatchObject({
    model: 'gemini-2.5-pro',
    promptTokens: 400,
    completionTokens: 35,
    costUsd: null,
  });
});

test('aider: the Tokens lines of its chat history; nothing known without a log', async () => {
  fs.writeFileSync(
    path.join(state, 'aider.chat.history.md'),
    '#### fix it\n\n> Tokens: 2.3k sent, 512 received. Cost: $0.01 message, $0.01 session.\n\n> Tokens: 1.0k sent, 100 received. Cost: $0.01 message, $0.02 session.\n',
  );
  expect(await readPartialUsage('aider', state)).toMatchObject({
    promptTokens: 3300,
    completionTokens: 612,
    costUsd: 0.02,
  });
  fs.rmSync(path.join(state, 'aider.chat.history.md'));
  expect(await readPartialUsage('aider', state)).toBeNull();
  expect(await readPartialUsage('claude-code', state)).toBeNull();
  expect(await readPartialUsage('codex', state)).toBeNull();
});
