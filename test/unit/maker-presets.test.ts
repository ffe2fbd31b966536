import { execFileSync } from 'node:child_process';
import { unconfined } from '../support/sandbox';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  abbreviatedCount,
  buildPresetInvocation,
  extractAgentText,
  parseAgentUsage,
  type PresetInvocation,
  type PresetRun,
} from '../../activities/makers/presets';
import { childEnvironment } from '../../activities/process/child-environment';
import { runCommand, type CommandResult } from '../../activities/process/run-command';
import {
  presetMakerSettingsSchema,
  type PresetBackend,
  type PresetMakerSettings,
  type PresetMakerSettingsInput,
} from '../../domain/maker-presets';

// Each preset's documented argv is run against a fake of the real tool (test/fixtures/agents/fake-*; Gemini
// CLI, the newest preset, only as the real CLI in test/e2e/agent-clis.e2e.test.ts),
// which parses the same flags the real CLI does and prints the real output format. The fakes get their
// script through a generated wrapper (binaryPath), exactly as the maker activity would run them: the
// child environment is the allow-list plus LOOP_PROMPT_FILE, nothing test-specific.

const FAKES = path.resolve(__dirname, '../fixtures/agents');
const FAKE_BINARY: Record<Exclude<PresetBackend, 'gemini'>, string> = {
  'claude-code': path.join(FAKES, 'fake-claude'),
  codex: path.join(FAKES, 'fake-codex'),
  aider: path.join(FAKES, 'fake-aider'),
};
const PROMPT = '# Goal\nMake hello.txt say "hello, loop".\n';

/** A run's inputs as the maker passes them: the state directory beside the prompt file, model from settings. */
function presetRun(promptFile: string, extra: Partial<PresetRun> = {}): PresetRun {
  return {
    prompt: PROMPT,
    promptFile,
    stateDir: path.dirname(promptFile),
    defaultModel: null,
    gateCommands: [],
    ...extra,
  };
}

let scratch: string;

beforeAll(async () => {
  scratch = await realpath(await mkdtemp(path.join(tmpdir(), 'maker-presets-')));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

/** A git workspace with one commit and the loop's prompt file inside .git, as runMaker prepares it. */
async function workspace(name: string): Promise<{ dir: string; promptFile: string; head: string }> {
  const dir = path.join(scratch, name, 'workspace');
  await mkdir(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  await writeFile(path.join(dir, 'hello.txt'), 'hello\n');
  git(dir, 'add', '--all');
  git(dir, 'commit', '-q', '-m', 'initial');
  const promptFile = path.join(dir, '.git', 'engineering-loop', 'prompt-1.md');
  await mkdir(path.dirname(promptFile), { recursive: true });
  await writeFile(promptFile, PROMPT);
  return { dir, promptFile, head: git(dir, 'rev-parse', 'HEAD') };
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Writes the fake's script and a wrapper that hands it over; the wrapper is what binaryPath names. */
async function fakeAgent(
  name: string,
  backend: keyof typeof FAKE_BINARY,
  script: Record<string, unknown>,
): Promise<{ binaryPath: string; recordFile: string }> {
  const dir = path.join(scratch, name);
  await mkdir(dir, { recursive: true });
  const recordFile = path.join(dir, 'record.json');
  const scriptFile = path.join(dir, 'script.json');
  await writeFile(scriptFile, JSON.stringify({ record: recordFile, ...script }));
  const binaryPath = path.join(dir, `wrapper-${backend}`);
  await writeFile(
    binaryPath,
    `#!/bin/sh\nFAKE_AGENT_SCRIPT=${shellQuote(scriptFile)} exec ${shellQuote(process.execPath)} ${shellQuote(FAKE_BINARY[backend])} "$@"\n`,
  );
  await chmod(binaryPath, 0o755);
  return { binaryPath, recordFile };
}

function settings(input: PresetMakerSettingsInput): PresetMakerSettings {
  return presetMakerSettingsSchema.parse(input);
}

/** Runs an invocation the way runMaker does: in the workspace, allow-listed env, bounded in time. */
function run(
  invocation: PresetInvocation,
  cwd: string,
  promptFile: string,
  timeoutMs = 30_000,
): Promise<CommandResult> {
  return runCommand({
    argv: invocation.argv,
    cwd,
    workspaceRoot: cwd,
    timeoutMs,
    env: childEnvironment({
      LOOP_PROMPT_FILE: promptFile,
      LOOP_ID: 'loop-test',
      LOOP_SEQUENCE: '1',
      LOOP_ITERATION: '1',
    }),
    stdin: invocation.stdin,
    sandbox: unconfined(cwd),
    outputCapBytes: 256 * 1024,
  });
}

async function recorded(
  recordFile: string,
): Promise<{ argv: string[]; prompt: string; stdin: string; env: Record<string, string> }> {
  return JSON.parse(await readFile(recordFile, 'utf8'));
}

function status(dir: string): string {
  return git(dir, 'status', '--porcelain', '--untracked-files=all');
}

describe('maker preset settings', () => {
  it('applies the documented defaults and rejects unknown fields', () => {
    expect(settings({ backend: 'claude-code' })).toEqual({
      backend: 'claude-code',
      binaryPath: 'claude',
      extraArgs: [],
      timeoutSeconds: 900,
    });
    expect(settings({ backend: 'codex' }).binaryPath).toBe('codex');
    expect(settings({ backend: 'aider', model: 'gpt-4.1', timeoutSeconds: 60 })).toMatchObject({
      binaryPath: 'aider',
      model: 'gpt-4.1',
      timeoutSeconds: 60,
    });
    expect(presetMakerSettingsSchema.safeParse({ backend: 'aider', argv: ['aider'] }).success).toBe(false);
    expect(presetMakerSettingsSchema.safeParse({ backend: 'codex', timeoutSeconds: 3601 }).success).toBe(false);
    expect(presetMakerSettingsSchema.safeParse({ backend: 'cursor' }).success).toBe(false);
  });

  it('builds each documented argv', () => {
    const promptFile = '/ws/.git/engineering-loop/prompt-3.md';
    expect(buildPresetInvocation(settings({ backend: 'claude-code', model: 'opus' }), presetRun(promptFile))).toEqual({
      argv: ['claude', '-p', '--output-format', 'json', '--permission-mode', 'acceptEdits', '--model', 'opus'],
      stdin: PROMPT,
    });
    expect(
      buildPresetInvocation(settings({ backend: 'codex', extraArgs: ['--ephemeral'] }), presetRun(promptFile)),
    ).toEqual({
      argv: [
        'codex',
        'exec',
        '--json',
        '--dangerously-bypass-approvals-and-sandbox',
        '--skip-git-repo-check',
        '--ephemeral',
        '-',
      ],
      stdin: PROMPT,
    });
    // The loop's gate commands are pre-approved for Claude Code's Bash tool, quoted as a shell would.
    const gates = presetRun(promptFile, {
      gateCommands: [
        ['npm', 'test'],
        ['node', '--test', 'a b'],
      ],
    });
    expect(buildPresetInvocation(settings({ backend: 'claude-code' }), gates).argv).toEqual([
      'claude',
      '-p',
      '--output-format',
      'json',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      "Bash(npm test:*),Bash(node --test 'a b':*)",
    ]);
    // The operator's default model applies when the request names none.
    expect(
      buildPresetInvocation(settings({ backend: 'codex' }), presetRun(promptFile, { defaultModel: 'o' })).argv,
    ).toContain('o');
    const aider = buildPresetInvocation(settings({ backend: 'aider', model: 'sonnet' }), presetRun(promptFile));
    expect(aider.stdin).toBeUndefined();
    expect(aider.argv).toEqual([
      'aider',
      '--message-file',
      promptFile,
      '--yes-always',
      '--no-auto-commits',
      '--no-dirty-commits',
      '--no-gitignore',
      '--chat-history-file',
      '/ws/.git/engineering-loop/aider.chat.history.md',
      '--input-history-file',
      '/ws/.git/engineering-loop/aider.input.history',
      '--llm-history-file',
      '/ws/.git/engineering-loop/aider.llm.history',
      '--no-pretty',
      '--no-stream',
      '--no-check-update',
      '--no-show-release-notes',
      '--no-show-model-warnings',
      '--analytics-disable',
      '--model',
      'sonnet',
    ]);
    // Gemini CLI puts its piped input before the --prompt text.
    expect(buildPresetInvocation(settings({ backend: 'gemini', model: 'g' }), presetRun(promptFile))).toEqual({
      argv: ['gemini', '--prompt', 'Carry out the task above.', '--output-format', 'json', '--yolo', '--model', 'g'],
      stdin: PROMPT,
    });
  });
});

describe('maker presets against fake agents (real subprocesses)', () => {
  it('claude-code: prompt on stdin, edits the workspace, usage read from the JSON result', async () => {
    const ws = await workspace('claude');
    const fake = await fakeAgent('claude', 'claude-code', {
      write: { 'hello.txt': 'hello, loop\n' },
      result: 'Updated hello.txt.',
      usage: {
        inputTokens: 12,
        outputTokens: 480,
        cacheCreationInputTokens: 3000,
        cacheReadInputTokens: 20000,
        costUsd: 0.0731,
      },
    });
    const invocation = buildPresetInvocation(
      settings({ backend: 'claude-code', binaryPath: fake.binaryPath, model: 'claude-opus-4-1' }),
      presetRun(ws.promptFile),
    );
    const result = await run(invocation, ws.dir, ws.promptFile);

    expect(result).toMatchObject({ exitCode: 0, timeoutStatus: 'COMPLETED', spawnError: null });
    expect(await readFile(path.join(ws.dir, 'hello.txt'), 'utf8')).toBe('hello, loop\n');
    expect(status(ws.dir)).toBe('M hello.txt');
    const record = await recorded(fake.recordFile);
    expect(record.prompt).toBe(PROMPT);
    expect(record.env.LOOP_PROMPT_FILE).toBe(ws.promptFile);

    const usage = parseAgentUsage('claude-code', result.stdout, result.stderr);
    expect(usage).toEqual({
      model: 'claude-opus-4-1',
      promptTokens: 12 + 3000 + 20000,
      completionTokens: 480,
      costUsd: 0.0731,
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      isError: false,
      summary: 'Updated hello.txt.',
      apiErrorStatus: null,
    });
    expect(extractAgentText('claude-code', result.stdout)).toBe('Updated hello.txt.');
  });

  it('codex: `-` reads the prompt from stdin, workspace-write sandbox edits, usage from turn.completed', async () => {
    const ws = await workspace('codex');
    const fake = await fakeAgent('codex', 'codex', {
      write: { 'hello.txt': 'hello, loop\n' },
      result: 'Changed hello.txt as asked.',
      usage: { inputTokens: 15200, cachedInputTokens: 9000, outputTokens: 730 },
    });
    const invocation = buildPresetInvocation(
      settings({ backend: 'codex', binaryPath: fake.binaryPath, model: 'gpt-5-codex' }),
      presetRun(ws.promptFile),
    );
    const result = await run(invocation, ws.dir, ws.promptFile);

    expect(result).toMatchObject({ exitCode: 0, timeoutStatus: 'COMPLETED', spawnError: null });
    expect(status(ws.dir)).toBe('M hello.txt');
    expect((await recorded(fake.recordFile)).prompt).toBe(PROMPT);

    const usage = parseAgentUsage('codex', result.stdout, result.stderr);
    // Codex's JSONL names neither the model nor a cost: they stay null rather than echo the request.
    expect(usage).toEqual({
      model: null,
      promptTokens: 15200,
      completionTokens: 730,
      costUsd: null,
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      isError: false,
      summary: 'Changed hello.txt as asked.',
      apiErrorStatus: null,
    });
    expect(extractAgentText('codex', result.stdout)).toBe('Changed hello.txt as asked.');
  });

  it('aider: reads --message-file, edits without committing, only the edit is left in the tree', async () => {
    const ws = await workspace('aider');
    // Aider's tags cache lands at the repo root whatever the flags; the maker excludes it (see wiring).
    await writeFile(path.join(ws.dir, '.git', 'info', 'exclude'), '.aider*\n');
    const fake = await fakeAgent('aider', 'aider', {
      write: { 'hello.txt': 'hello, loop\n' },
      usage: { sent: 2345, received: 512, costUsd: 0.0123 },
    });
    const invocation = buildPresetInvocation(
      settings({ backend: 'aider', binaryPath: fake.binaryPath, model: 'anthropic/claude-sonnet-4-20250514' }),
      presetRun(ws.promptFile),
    );
    const result = await run(invocation, ws.dir, ws.promptFile);

    expect(result).toMatchObject({ exitCode: 0, timeoutStatus: 'COMPLETED', spawnError: null });
    expect(git(ws.dir, 'rev-parse', 'HEAD')).toBe(ws.head);
    expect(status(ws.dir)).toBe('M hello.txt');
    expect((await recorded(fake.recordFile)).prompt).toBe(PROMPT);
    expect(result.stdout).toContain('Tokens: 2.3k sent, 512 received. Cost: $0.01 message, $0.01 session.');

    expect(parseAgentUsage('aider', result.stdout, result.stderr)).toEqual({
      model: 'anthropic/claude-sonnet-4-20250514',
      promptTokens: 2300,
      completionTokens: 512,
      costUsd: 0.01,
      sessionId: null,
      isError: false,
      summary: null,
      apiErrorStatus: null,
    });
    expect(extractAgentText('aider', result.stdout)).toBe(result.stdout);
  });

  it('the fakes catch a wrong argv the way the real tools would', async () => {
    const ws = await workspace('wrong-argv');
    const claude = await fakeAgent('wrong-argv-claude', 'claude-code', { write: { 'hello.txt': 'x\n' } });
    const unknownFlag = await run(
      { argv: [claude.binaryPath, '-p', '--output-format', 'json', '--yolo'], stdin: PROMPT },
      ws.dir,
      ws.promptFile,
    );
    expect(unknownFlag.exitCode).toBe(1);
    expect(unknownFlag.stderr).toContain("unknown option '--yolo'");

    // Codex without --sandbox workspace-write runs read-only: the edit fails.
    const codex = await fakeAgent('wrong-argv-codex', 'codex', { write: { 'hello.txt': 'x\n' } });
    const readOnly = await run(
      { argv: [codex.binaryPath, 'exec', '--json', '-'], stdin: PROMPT },
      ws.dir,
      ws.promptFile,
    );
    expect(readOnly.stdout).toContain('"status":"failed"');

    // Aider left to its defaults commits behind the loop's back and edits .gitignore.
    const aider = await fakeAgent('wrong-argv-aider', 'aider', { write: { 'hello.txt': 'x\n' } });
    await run(
      { argv: [aider.binaryPath, '--message-file', ws.promptFile, '--yes-always'], stdin: undefined },
      ws.dir,
      ws.promptFile,
    );
    expect(git(ws.dir, 'rev-parse', 'HEAD')).not.toBe(ws.head);
    expect(status(ws.dir)).toContain('.gitignore');
  });

  it('an agent that exits 0 without changes leaves the tree clean', async () => {
    for (const backend of ['claude-code', 'codex', 'aider'] as const) {
      const ws = await workspace(`no-change-${backend}`);
      await writeFile(path.join(ws.dir, '.git', 'info', 'exclude'), '.aider*\n');
      const fake = await fakeAgent(`no-change-${backend}`, backend, { write: {}, result: 'Nothing to do.' });
      const result = await run(
        buildPresetInvocation(settings({ backend, binaryPath: fake.binaryPath }), presetRun(ws.promptFile)),
        ws.dir,
        ws.promptFile,
      );
      expect({ backend, exitCode: result.exitCode, stderr: result.stderr }).toEqual({
        backend,
        exitCode: 0,
        stderr: '',
      });
      expect({ backend, status: status(ws.dir) }).toEqual({ backend, status: '' });
      expect(git(ws.dir, 'rev-parse', 'HEAD')).toBe(ws.head);
    }
  });

  it('a hung agent is killed at its timeout', async () => {
    const ws = await workspace('hang');
    const fake = await fakeAgent('hang', 'claude-code', { hang: true, write: { 'hello.txt': 'never\n' } });
    const invocation = buildPresetInvocation(
      settings({ backend: 'claude-code', binaryPath: fake.binaryPath, timeoutSeconds: 1 }),
      presetRun(ws.promptFile),
    );
    const started = Date.now();
    const result = await run(invocation, ws.dir, ws.promptFile, 1_000);

    expect(result.timeoutStatus).toBe('TIMED_OUT');
    expect(result.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(status(ws.dir)).toBe('');
    expect(parseAgentUsage('claude-code', result.stdout, result.stderr)).toMatchObject({
      promptTokens: null,
      costUsd: null,
      sessionId: null,
    });
  });
});

describe('usage parsers on captured output', () => {
  it('claude: a success result with cache tokens and two models', () => {
    const stdout = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      duration_ms: 20311,
      num_turns: 7,
      result: 'All done.',
      session_id: '0e639165-79b1-4bd4-bb0f-4cb4c15115d4',
      total_cost_usd: 0.0842,
      usage: {
        input_tokens: 30,
        cache_creation_input_tokens: 5000,
        cache_read_input_tokens: 60000,
        output_tokens: 1900,
      },
      modelUsage: {
        'claude-3-5-haiku-20241022': { inputTokens: 400, outputTokens: 30, costUSD: 0.0005 },
        'claude-sonnet-4-5-20250929': {
          inputTokens: 30,
          cacheCreationInputTokens: 5000,
          cacheReadInputTokens: 60000,
          outputTokens: 1900,
          costUSD: 0.0837,
        },
      },
      permission_denials: [],
    });
    // `usage` is the main model's alone: the small model's tokens are counted from modelUsage.
    expect(parseAgentUsage('claude-code', stdout, '')).toEqual({
      model: 'claude-sonnet-4-5-20250929,claude-3-5-haiku-20241022',
      promptTokens: 65030 + 400,
      completionTokens: 1900 + 30,
      costUsd: 0.0842,
      sessionId: '0e639165-79b1-4bd4-bb0f-4cb4c15115d4',
      isError: false,
      summary: 'All done.',
      apiErrorStatus: null,
    });
  });

  it('claude: an error result, stream-json, and output that is not a result', () => {
    const error = JSON.stringify({
      type: 'result',
      subtype: 'error_max_turns',
      is_error: true,
      session_id: 's-1',
      total_cost_usd: 0.2,
      usage: { input_tokens: 5, output_tokens: 9 },
    });
    expect(parseAgentUsage('claude-code', error, '')).toMatchObject({
      isError: true,
      sessionId: 's-1',
      costUsd: 0.2,
      promptTokens: 5,
      completionTokens: 9,
      model: null,
      summary: null,
      apiErrorStatus: null,
    });

    const stream = [
      JSON.stringify({ type: 'system', subtype: 'init', session_id: 's-2' }),
      JSON.stringify({ type: 'result', is_error: false, result: 'ok', session_id: 's-2' }),
    ].join('\n');
    expect(parseAgentUsage('claude-code', stream, '')).toMatchObject({
      sessionId: 's-2',
      summary: 'ok',
      promptTokens: null,
      costUsd: null,
    });
    expect(extractAgentText('claude-code', stream)).toBe('ok');

    expect(parseAgentUsage('claude-code', 'Error: Invalid API key · Please run /login\n', '')).toEqual({
      model: null,
      promptTokens: null,
      completionTokens: null,
      costUsd: null,
      sessionId: null,
      isError: false,
      summary: null,
      apiErrorStatus: null,
    });
    expect(extractAgentText('claude-code', 'plain text\n')).toBe('plain text\n');
  });

  it('codex: the last turn.completed counts, junk lines are skipped, turn.failed is an error', () => {
    const stdout = [
      '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
      '{"type":"turn.started"}',
      '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Scanning**"}}',
      '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"first"}}',
      '{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":20,"output_tokens":10}}',
      'not json',
      '[output truncated: kept the first 10 and the last 10 of 99 bytes, 79 bytes omitted]',
      '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"final answer"}}',
      '{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}',
    ].join('\n');
    expect(parseAgentUsage('codex', stdout, '')).toEqual({
      model: null,
      promptTokens: 24763,
      completionTokens: 122,
      costUsd: null,
      sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
      isError: false,
      summary: 'final answer',
      apiErrorStatus: null,
    });
    expect(extractAgentText('codex', stdout)).toBe('final answer');

    const failed =
      '{"type":"thread.started","thread_id":"t"}\n{"type":"turn.failed","error":{"message":"stream disconnected"}}\n';
    expect(parseAgentUsage('codex', failed, '')).toMatchObject({
      isError: true,
      sessionId: 't',
      promptTokens: null,
      summary: null,
      apiErrorStatus: null,
    });
    expect(parseAgentUsage('codex', 'final message only (no --json)\n', '')).toMatchObject({
      sessionId: null,
      promptTokens: null,
      isError: false,
    });
  });

  it('aider: Tokens lines add up, k/M suffixes, cache parts, last session cost; absent → null', () => {
    const stdout = [
      'Aider v0.86.1',
      'Model: gpt-4.1 with diff edit format',
      'Git repo: .git with 12 files',
      '',
      'Tokens: 12k sent, 1.1k cache write, 4.0k cache hit, 900 received. Cost: $0.04 message, $0.04 session.',
      'Applied edit to src/a.ts',
      'Tokens: 1.2M sent, 2.5k received. Cost: $0.0012 message, $0.0412 session.',
    ].join('\n');
    expect(parseAgentUsage('aider', stdout, '')).toEqual({
      model: 'gpt-4.1',
      promptTokens: 12_000 + 1_200_000,
      completionTokens: 900 + 2_500,
      costUsd: 0.0412,
      sessionId: null,
      isError: false,
      summary: null,
      apiErrorStatus: null,
    });
    // A model without pricing metadata: aider prints only the Tokens part.
    expect(parseAgentUsage('aider', 'Tokens: 116 sent, 30 received.\n', '')).toMatchObject({
      promptTokens: 116,
      completionTokens: 30,
      costUsd: null,
      model: null,
    });
    expect(parseAgentUsage('aider', 'Aider v0.86.1\nNo changes made.\n', '')).toMatchObject({
      promptTokens: null,
      completionTokens: null,
      costUsd: null,
    });
    expect([
      abbreviatedCount('512'),
      abbreviatedCount('2.3k'),
      abbreviatedCount('1.5M'),
      abbreviatedCount('x'),
    ]).toEqual([512, 2300, 1_500_000, null]);
  });

  it('gemini: tokens summed over every model, thoughts as output; the error object on stderr with its status', () => {
    const tokens = (prompt: number, candidates: number, thoughts: number) => ({
      api: { totalRequests: 1 },
      tokens: {
        input: prompt,
        prompt,
        candidates,
        total: prompt + candidates + thoughts,
        cached: 0,
        thoughts,
        tool: 0,
      },
    });
    const stdout = JSON.stringify({
      session_id: 's-1',
      response: 'Fixed sum().',
      stats: { models: { 'gemini-2.5-flash-lite': tokens(300, 10, 0), 'gemini-2.5-pro': tokens(9000, 400, 250) } },
    });
    expect(parseAgentUsage('gemini', stdout, 'YOLO mode is enabled.\n')).toEqual({
      model: 'gemini-2.5-pro,gemini-2.5-flash-lite',
      promptTokens: 9300,
      completionTokens: 660,
      costUsd: null,
      sessionId: 's-1',
      isError: false,
      summary: 'Fixed sum().',
      apiErrorStatus: null,
    });
    expect(extractAgentText('gemini', stdout)).toBe('Fixed sum().');
    // As 0.61.0 prints a model API's 404: the trace, its status, then the JSON object, all on stderr.
    const stderr = [
      'Error when talking to Gemini API ModelNotFoundError: model x does not exist',
      '    at classifyGoogleError (file:///gemini/bundle/chunk.js:1:1) {',
      '  code: 404',
      '}',
      '{',
      '  "session_id": "s-2",',
      '  "error": { "type": "Error", "message": "model x does not exist", "code": 1 }',
      '}',
    ].join('\n');
    expect(parseAgentUsage('gemini', '', stderr)).toMatchObject({
      isError: true,
      sessionId: 's-2',
      summary: 'model x does not exist',
      apiErrorStatus: 404,
      promptTokens: null,
    });
    // An argument it does not take: yargs' message above the help text.
    const usage = parseAgentUsage('gemini', '', 'Unknown arguments: such-flag, suchFlag\nUsage: gemini [options]\n');
    expect(usage).toMatchObject({ isError: false, summary: 'Unknown arguments: such-flag, suchFlag' });
  });

  it('a command maker reports nothing about itself', () => {
    expect(parseAgentUsage('command', '{"total_cost_usd":1}', 'Tokens: 1 sent, 1 received.')).toEqual({
      model: null,
      promptTokens: null,
      completionTokens: null,
      costUsd: null,
      sessionId: null,
      isError: false,
      summary: null,
      apiErrorStatus: null,
    });
    expect(extractAgentText('command', 'review text\n')).toBe('review text\n');
  });
});
