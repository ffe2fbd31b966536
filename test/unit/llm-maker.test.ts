import fs from 'node:fs';
import { testSandbox } from '../support/sandbox';
import os from 'node:os';
import path from 'node:path';
import {
  LlmMakerCancelled,
  ProviderCallError,
  runLlmMaker,
  type LlmMakerOptions,
} from '../../activities/makers/llm-maker';
import { executeWorkspaceTool, type ToolContext } from '../../activities/makers/workspace-tools';
import { workspaceRoot } from '../../activities/makers/workspace-paths';
import {
  startFakeProviderServer,
  type FakeProviderServer,
  type RecordedProviderRequest,
} from '../support/fake-provider-server';
import { BUGGY_SUM, CORRECT_SUM, createFixtureRepo } from '../support/fixture-repo';

// The built-in maker against a real local HTTP server speaking each provider's wire format, over a
// real git fixture repository; commands run as real subprocesses.

type Provider = LlmMakerOptions['provider'];

interface SentToolResult {
  id: string;
  content: string;
  /** Anthropic marks errors with is_error; OpenAI has no such flag (null). */
  isError: boolean | null;
}

/** The tool results a request sent back to the model, read from the provider's own format. */
function sentToolResults(provider: Provider, request: RecordedProviderRequest): SentToolResult[] {
  const messages = request.body.messages as any[];
  if (provider === 'openai') {
    return messages
      .filter((m) => m.role === 'tool')
      .map((m) => ({ id: m.tool_call_id, content: String(m.content), isError: null }));
  }
  return messages
    .filter((m) => m.role === 'user' && Array.isArray(m.content))
    .flatMap((m) => m.content.filter((block: any) => block.type === 'tool_result'))
    .map((block: any) => ({
      id: block.tool_use_id,
      content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content),
      isError: block.is_error === true,
    }));
}

function lastResults(provider: Provider, server: FakeProviderServer): SentToolResult[] {
  return sentToolResults(provider, server.requests[server.requests.length - 1]!);
}

describe.each<Provider>(['openai', 'anthropic'])('built-in LLM maker over %s', (provider) => {
  let server: FakeProviderServer;
  let workspace: string;
  let outside: string;

  beforeEach(async () => {
    server = await startFakeProviderServer();
    workspace = createFixtureRepo();
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'llm-maker-outside-'));
  });

  afterEach(async () => {
    await server.close();
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const options = (overrides: Partial<LlmMakerOptions> = {}): LlmMakerOptions => ({
    provider,
    baseUrl: server.baseUrl,
    apiKey: 'test-key',
    model: provider === 'openai' ? 'gpt-test' : 'claude-test',
    sandbox: testSandbox('none'),
    workspace,
    prompt: 'Make sum() add its arguments. Run the tests.',
    maxSteps: 10,
    allowedCommands: [['node', '--test']],
    commandTimeoutMs: 30_000,
    requestTimeoutMs: 10_000,
    maxOutputTokens: 4096,
    ...overrides,
  });

  it('lists, reads, edits and tests, then stops; the file changes and every call is recorded', async () => {
    server.enqueue(
      { kind: 'tools', text: 'Looking around.', calls: [{ name: 'list_files', input: {} }] },
      { kind: 'tools', calls: [{ name: 'read_file', input: { path: 'src/sum.js' } }] },
      {
        kind: 'tools',
        calls: [{ name: 'replace_in_file', input: { path: 'src/sum.js', old: 'a - b', new: 'a + b' } }],
      },
      { kind: 'tools', calls: [{ name: 'run_command', input: { argv: ['node', '--test'] } }] },
      { kind: 'text', text: 'Fixed sum(); the tests pass.' },
    );
    const heartbeats: number[] = [];
    const result = await runLlmMaker(options({ heartbeat: () => heartbeats.push(Date.now()) }));

    expect(result.stopReason).toBe('completed');
    expect(result.steps).toBe(5);
    expect(result.finalMessage).toBe('Fixed sum(); the tests pass.');
    expect(fs.readFileSync(path.join(workspace, 'src/sum.js'), 'utf8')).toBe(CORRECT_SUM);
    expect(heartbeats.length).toBeGreaterThan(0);
    expect(result.toolCalls.map((c) => [c.tool, c.ok])).toEqual([
      ['list_files', true],
      ['read_file', true],
      ['replace_in_file', true],
      ['run_command', true],
    ]);
    expect(result.toolCalls[3]!.summary).toContain('exit code 0');

    expect(result.calls).toHaveLength(5);
    result.calls.forEach((call, i) => {
      const n = i + 1;
      expect(call).toMatchObject({
        provider,
        model: provider === 'openai' ? 'gpt-test' : 'claude-test',
        responseId: provider === 'openai' ? `chatcmpl-${n}` : `msg_${n}`,
        requestId: provider === 'openai' ? `req-${n}` : `req_${n}`,
        promptTokens: 100 + n,
        completionTokens: 20,
        outcome: n < 5 ? 'tool-calls' : 'stop',
      });
      expect(call.latencyMs).toBeGreaterThanOrEqual(0);
    });

    // What went over the wire, in each provider's own format.
    expect(server.requests).toHaveLength(5);
    const first = server.requests[0]!;
    expect(first.path).toBe(provider === 'openai' ? '/v1/chat/completions' : '/v1/messages');
    if (provider === 'openai') {
      expect(first.headers.authorization).toBe('Bearer test-key');
      expect(first.body.stream).toBeFalsy();
      expect(first.body.tools.map((t: any) => t.function.name).sort()).toEqual([
        'list_files',
        'read_file',
        'replace_in_file',
        'run_command',
        'search_files',
        'write_file',
      ]);
      const toolMessage = server.requests[1]!.body.messages.find((m: any) => m.role === 'tool');
      expect(toolMessage.tool_call_id).toBe('call_1_0');
      const assistant = server.requests[1]!.body.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.tool_calls[0]).toMatchObject({
        id: 'call_1_0',
        type: 'function',
        function: { name: 'list_files' },
      });
    } else {
      expect(first.headers['x-api-key']).toBe('test-key');
      expect(first.headers['anthropic-version']).toBeDefined();
      expect(first.body.max_tokens).toBe(4096);
      expect(first.body.stream).toBeFalsy();
      expect(first.body.tools.map((t: any) => t.name).sort()).toEqual([
        'list_files',
        'read_file',
        'replace_in_file',
        'run_command',
        'search_files',
        'write_file',
      ]);
      const assistant = server.requests[1]!.body.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.content).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'tool_use', id: 'toolu_1_0', name: 'list_files' })]),
      );
    }
    const listed = sentToolResults(provider, server.requests[1]!);
    expect(listed[0]!.id).toBe(provider === 'openai' ? 'call_1_0' : 'toolu_1_0');
    expect(listed[0]!.content).toContain('src/sum.js');
    expect(listed[0]!.content).not.toContain('.git/');
    expect(sentToolResults(provider, server.requests[2]!).at(-1)!.content).toContain(BUGGY_SUM);
    const tested = sentToolResults(provider, server.requests[4]!).at(-1)!;
    expect(tested.content).toContain('exit code 0');
    expect(tested.content).toMatch(/pass 2/);
    if (provider === 'anthropic') expect(tested.isError).toBe(false);
  });

  it('refuses disallowed commands and path escapes, and tells the model so as tool errors', async () => {
    const secret = path.join(outside, 'secret.txt');
    fs.writeFileSync(secret, 'outside secret\n');
    fs.writeFileSync(path.join(outside, 'escape.test.js'), "require('node:test')('x', () => {});\n");
    fs.symlinkSync(outside, path.join(workspace, 'linked-dir'));
    fs.symlinkSync(secret, path.join(workspace, 'linked-file.txt'));
    server.enqueue(
      {
        kind: 'tools',
        calls: [
          { name: 'run_command', input: { argv: ['rm', '-rf', '.'] } },
          { name: 'run_command', input: { argv: ['node', '-e', 'console.log(1)'] } },
          { name: 'read_file', input: { path: '../x' } },
          { name: 'read_file', input: { path: secret } },
          { name: 'read_file', input: { path: 'linked-dir/secret.txt' } },
          { name: 'write_file', input: { path: 'linked-file.txt', content: 'overwritten' } },
          { name: 'write_file', input: { path: 'linked-dir/new.txt', content: 'planted' } },
          { name: 'replace_in_file', input: { path: 'linked-file.txt', old: 'outside', new: 'changed' } },
          { name: 'write_file', input: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' } },
          { name: 'run_command', input: { argv: ['node', '--test', path.join(outside, 'escape.test.js')] } },
          { name: 'list_files', input: { path: '/' } },
          { name: 'search_files', input: { pattern: 'secret', path: 'linked-dir' } },
        ],
      },
      { kind: 'text', text: 'Nothing I can do.' },
    );
    const result = await runLlmMaker(options());

    expect(result.stopReason).toBe('completed');
    expect(result.toolCalls).toHaveLength(12);
    expect(result.toolCalls.filter((c) => c.ok)).toEqual([]);
    expect(fs.readFileSync(secret, 'utf8')).toBe('outside secret\n');
    expect(fs.existsSync(path.join(outside, 'new.txt'))).toBe(false);
    expect(fs.existsSync(path.join(workspace, '.git/hooks/pre-commit'))).toBe(false);

    const results = lastResults(provider, server);
    expect(results).toHaveLength(12);
    for (const sent of results) {
      expect(sent.content).toMatch(/^error: /);
      if (provider === 'anthropic') expect(sent.isError).toBe(true);
    }
    const texts = results.map((r) => r.content);
    expect(texts[0]).toMatch(/"rm -rf \." is not allowed; allowed argv prefixes: \["node","--test"\]/);
    expect(texts[1]).toContain('is not allowed');
    expect(texts[2]).toContain('contains ".."');
    expect(texts[3]).toContain('outside the workspace');
    expect(texts[4]).toContain('symlink that leads outside the workspace');
    expect(texts[5]).toContain('symlink that leads outside the workspace');
    expect(texts[6]).toContain('symlink that leads outside the workspace');
    expect(texts[7]).toContain('symlink that leads outside the workspace');
    expect(texts[8]).toContain('inside .git');
    expect(texts[9]).toContain('points outside the workspace');
    expect(texts[10]).toContain('outside the workspace');
    expect(texts[11]).toContain('symlink that leads outside the workspace');
    expect(texts.join('\n')).not.toContain('outside secret');
  });

  it('answers a call with unusable arguments with a tool error and keeps going', async () => {
    // OpenAI sends arguments as a JSON string, which a model can garble. Anthropic sends an input object,
    // so its analogue is an input of the wrong shape.
    const broken =
      provider === 'openai'
        ? { name: 'read_file', rawArguments: '{"path": "src/sum.js"' }
        : { name: 'read_file', input: { path: 42 } };
    server.enqueue(
      { kind: 'tools', calls: [broken] },
      { kind: 'tools', calls: [{ name: 'read_file', input: { path: 'src/sum.js' } }] },
      { kind: 'text', text: 'done' },
    );
    const result = await runLlmMaker(options());

    expect(result.stopReason).toBe('completed');
    expect(result.steps).toBe(3);
    expect(result.toolCalls.map((c) => c.ok)).toEqual([false, true]);
    const answer = sentToolResults(provider, server.requests[1]!)[0]!;
    if (provider === 'openai') {
      expect(answer.content).toContain('the arguments of read_file were not valid JSON');
      expect(answer.content).toContain('Received: {"path": "src/sum.js"');
      // The assistant turn is replayed with empty arguments, and the conversation stays well-formed.
      const replayed = server.requests[1]!.body.messages.find((m: any) => m.role === 'assistant');
      expect(replayed.tool_calls[0].function.arguments).toBe('{}');
      expect(result.toolCalls[0]!.summary).toBe('read_file: arguments were not valid JSON');
    } else {
      expect(answer.content).toContain('the arguments of read_file do not match its schema');
      expect(answer.content).toContain('path');
      expect(answer.isError).toBe(true);
    }
    expect(lastResults(provider, server)[1]!.content).toContain(BUGGY_SUM);
  });

  it('stops at the step limit', async () => {
    server.enqueue(
      { kind: 'tools', calls: [{ name: 'list_files', input: {} }] },
      { kind: 'tools', calls: [{ name: 'search_files', input: { pattern: 'sum' } }] },
      { kind: 'tools', calls: [{ name: 'list_files', input: {} }] },
    );
    const result = await runLlmMaker(options({ maxSteps: 2 }));

    expect(result.stopReason).toBe('step_limit');
    expect(result.steps).toBe(2);
    expect(result.calls).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
    expect(server.pending()).toBe(1);
  });

  it('throws a retryable ProviderCallError on 429 without retrying itself, carrying the calls so far', async () => {
    server.enqueue({ kind: 'tools', calls: [{ name: 'list_files', input: {} }] }, { kind: 'error', status: 429 });
    const error = await runLlmMaker(options()).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ProviderCallError);
    const failure = error as ProviderCallError;
    expect(failure.status).toBe(429);
    expect(failure.retryable).toBe(true);
    expect(failure.message).toContain('HTTP 429');
    expect(server.requests).toHaveLength(2); // no retry inside the SDK
    expect(failure.calls.map((c) => c.outcome)).toEqual(['tool-calls', 'http_429']);
    expect(failure.calls[0]!.responseId).toBe(provider === 'openai' ? 'chatcmpl-1' : 'msg_1');
    expect(failure.calls[1]).toMatchObject({ responseId: null, requestId: provider === 'openai' ? 'req-2' : 'req_2' });

    // The activity retry (Temporal's backoff) runs the maker again and this time it succeeds.
    server.enqueue({ kind: 'text', text: 'all good' });
    const retried = await runLlmMaker(options());
    expect(retried.stopReason).toBe('completed');
    expect(retried.calls).toHaveLength(1);
  });

  it.each([500, 503])('treats HTTP %i as retryable', async (status) => {
    server.enqueue({ kind: 'error', status });
    const error = (await runLlmMaker(options()).catch((e: unknown) => e)) as ProviderCallError;
    expect(error).toBeInstanceOf(ProviderCallError);
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it.each([401, 403, 400])('throws a non-retryable ProviderCallError on HTTP %i', async (status) => {
    server.enqueue({ kind: 'error', status, message: 'no' });
    const error = (await runLlmMaker(options()).catch((e: unknown) => e)) as ProviderCallError;

    expect(error).toBeInstanceOf(ProviderCallError);
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(false);
    expect(error.calls).toEqual([
      expect.objectContaining({ outcome: `http_${status}`, responseId: null, promptTokens: null }),
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('treats an unreachable endpoint as retryable', async () => {
    const closed = await startFakeProviderServer();
    await closed.close();
    const error = (await runLlmMaker(options({ baseUrl: closed.baseUrl })).catch(
      (e: unknown) => e,
    )) as ProviderCallError;
    expect(error).toBeInstanceOf(ProviderCallError);
    expect(error.status).toBeNull();
    expect(error.retryable).toBe(true);
    expect(error.calls.map((c) => c.outcome)).toEqual(['network_error']);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('turns a request timeout into a retryable error', async () => {
    server.enqueue({ kind: 'delay', ms: 5_000 });
    const error = (await runLlmMaker(options({ requestTimeoutMs: 300 })).catch((e: unknown) => e)) as ProviderCallError;
    expect(error).toBeInstanceOf(ProviderCallError);
    expect(error.status).toBeNull();
    expect(error.retryable).toBe(true);
    expect(error.calls.map((c) => c.outcome)).toEqual(['timeout']);
  });

  it('treats a 200 whose body is not a completion as a retryable invalid response', async () => {
    server.enqueue({ kind: 'raw', status: 200, body: { unexpected: true } });
    const error = (await runLlmMaker(options()).catch((e: unknown) => e)) as ProviderCallError;
    expect(error).toBeInstanceOf(ProviderCallError);
    expect(error.retryable).toBe(true);
    expect(error.calls.map((c) => c.outcome)).toEqual(['invalid_response']);
  });

  it('records no response id when the provider sent none, rather than an invented one', async () => {
    const body =
      provider === 'openai'
        ? {
            object: 'chat.completion',
            created: 1,
            model: 'gpt-test',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          }
        : {
            type: 'message',
            role: 'assistant',
            model: 'claude-test',
            content: [{ type: 'text', text: 'ok' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 5, output_tokens: 1 },
          };
    server.enqueue({ kind: 'raw', status: 200, body });
    const result = await runLlmMaker(options());
    expect(result.stopReason).toBe('completed');
    expect(result.calls[0]!.responseId).toBeNull();
  });

  it('ends on activity cancellation with the calls made so far, the cut one last, so they can be recorded', async () => {
    server.enqueue({ kind: 'delay', ms: 5_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('activity cancelled')), 200);
    const error = await runLlmMaker(options({ signal: controller.signal })).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ProviderCallError);
    expect(error).toBeInstanceOf(LlmMakerCancelled);
    expect(String((error as LlmMakerCancelled).cause)).toContain('activity cancelled');
    expect((error as LlmMakerCancelled).calls.map((c) => [c.outcome, c.promptTokens])).toEqual([['cancelled', null]]);
  });
});

describe('workspace tools', () => {
  let workspace: string;
  let ctx: ToolContext;

  beforeAll(async () => {
    workspace = createFixtureRepo();
    fs.mkdirSync(path.join(workspace, 'node_modules/dep'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'node_modules/dep/index.js'), 'exports.sum = 1;\n');
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'one\ntwo\nthree\nfour\n');
    ctx = {
      root: await workspaceRoot(workspace),
      sandbox: testSandbox('none'),
      allowedCommands: [['node', '--test']],
      commandTimeoutMs: 30_000,
    };
  });

  afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));

  it('lists without .git and node_modules', async () => {
    const out = await executeWorkspaceTool('list_files', {}, ctx);
    expect(out.ok).toBe(true);
    expect(out.output.split('\n')).toEqual([
      'notes.txt',
      'package.json',
      'src/',
      'test/',
      'src/sum.js',
      'test/sum.test.js',
    ]);
  });

  it('reads a line range', async () => {
    const out = await executeWorkspaceTool('read_file', { path: 'notes.txt', startLine: 2, endLine: 3 }, ctx);
    expect(out.output).toBe('notes.txt (lines 2-3 of 4):\ntwo\nthree\n');
  });

  it('searches literally and by regex, skipping node_modules', async () => {
    const literal = await executeWorkspaceTool('search_files', { pattern: 'sum(2, 3)' }, ctx);
    expect(literal.output).toBe(
      "test/sum.test.js:4: test('sum adds two numbers', () => assert.strictEqual(sum(2, 3), 5));",
    );
    const everywhere = await executeWorkspaceTool('search_files', { pattern: 'exports.sum' }, ctx);
    expect(everywhere.output).toBe('src/sum.js:1: exports.sum = (a, b) => a - b;');
    const regex = await executeWorkspaceTool(
      'search_files',
      { pattern: '^t\\w+$', regex: true, path: 'notes.txt' },
      ctx,
    );
    expect(regex.output).toBe('notes.txt:2: two\nnotes.txt:3: three');
    const invalid = await executeWorkspaceTool('search_files', { pattern: '(', regex: true }, ctx);
    expect(invalid.ok).toBe(false);
    expect(invalid.output).toContain('not a valid regular expression');
  });

  it('stops a catastrophically backtracking regex instead of hanging', async () => {
    fs.writeFileSync(path.join(workspace, 'aaa.txt'), `${'a'.repeat(40)}!\n`);
    const started = Date.now();
    const out = await executeWorkspaceTool('search_files', { pattern: '(a+)+$', regex: true, path: 'aaa.txt' }, ctx);
    expect(out.ok).toBe(false);
    expect(out.output).toContain('ran out of time');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('replaces only a unique exact match and writes new files in new directories', async () => {
    const ambiguous = await executeWorkspaceTool(
      'replace_in_file',
      { path: 'test/sum.test.js', old: 'sum(', new: 'add(' },
      ctx,
    );
    expect(ambiguous.ok).toBe(false);
    expect(ambiguous.output).toMatch(/occurs \d+ times/);
    const missing = await executeWorkspaceTool('replace_in_file', { path: 'notes.txt', old: 'five', new: '5' }, ctx);
    expect(missing.output).toContain('not found');
    const dollar = await executeWorkspaceTool(
      'replace_in_file',
      { path: 'notes.txt', old: 'four', new: "$& $' 4" },
      ctx,
    );
    expect(dollar.ok).toBe(true);
    expect(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8')).toBe("one\ntwo\nthree\n$& $' 4\n");
    const written = await executeWorkspaceTool('write_file', { path: 'docs/new/readme.md', content: '# hi\n' }, ctx);
    expect(written.ok).toBe(true);
    expect(fs.readFileSync(path.join(workspace, 'docs/new/readme.md'), 'utf8')).toBe('# hi\n');
  });

  it('reports a failing allowed command as not ok, with its output', async () => {
    fs.writeFileSync(path.join(workspace, 'src/sum.js'), BUGGY_SUM);
    const out = await executeWorkspaceTool('run_command', { argv: ['node', '--test'] }, ctx);
    expect(out.ok).toBe(false);
    expect(out.output).toContain('exit code 1');
    expect(out.output).toMatch(/fail 2/);
  });

  it('rejects unknown tools and arguments of the wrong shape', async () => {
    expect((await executeWorkspaceTool('delete_everything', {}, ctx)).output).toContain('unknown tool');
    expect((await executeWorkspaceTool('run_command', { argv: [] }, ctx)).output).toContain('do not match its schema');
  });
});
