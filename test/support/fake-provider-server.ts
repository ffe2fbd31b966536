import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PresetBackend } from '../../domain/maker-presets';

// A real HTTP server speaking the tool-calling wire formats with scripted, provider-neutral turns:
// OpenAI Chat Completions (POST /v1/chat/completions; aider, the built-in agent), Anthropic Messages
// (POST /v1/messages, JSON or SSE when the request streams; Claude Code, the built-in agent), OpenAI
// Responses (POST /v1/responses, SSE; Codex) and the Gemini API (POST /v1beta/models/<model>:generateContent,
// or :streamGenerateContent?alt=sse; Gemini CLI). Each request takes the next scripted turn and gets it
// rendered in the format of the endpoint it hit. Every request is recorded so tests can check what
// was sent back to the model.

export interface ScriptedToolCall {
  /** Defaults to call_<n> (OpenAI) / toolu_<n> (Anthropic). */
  id?: string;
  name: string;
  /**
   * The tool input. OpenAI: sent as JSON.stringify(input), or verbatim when `rawArguments` is set.
   * Anthropic: sent as the tool_use block's `input` object. A function computes it from the request (a
   * CLI's absolute paths are in its system prompt).
   */
  input?: unknown;
  /** OpenAI only: the exact `function.arguments` string, e.g. malformed JSON. */
  rawArguments?: string;
}

export type ScriptedTurn =
  | { kind: 'tools'; calls: ScriptedToolCall[]; text?: string }
  | { kind: 'text'; text: string }
  /** An HTTP error in the provider's error format. */
  | { kind: 'error'; status: number; message?: string }
  /** Any status and JSON body, sent as is. */
  | { kind: 'raw'; status: number; body: unknown }
  /** Answers nothing for `ms` (for request timeouts), then a text turn. */
  | { kind: 'delay'; ms: number; text?: string };

export interface RecordedProviderRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeProviderServer {
  /** http://127.0.0.1:<port>/v1, the baseUrl for every format (Claude Code wants it without /v1). */
  baseUrl: string;
  requests: RecordedProviderRequest[];
  /** Queues turns; each request takes the next one. */
  enqueue(...turns: ScriptedTurn[]): void;
  /** Turns not consumed yet. */
  pending(): number;
  /** Drops the turns not consumed (a CLI that gave up early leaves some). */
  reset(): void;
  close(): Promise<void>;
}

export const FAKE_USAGE = { input: 100, output: 20 };

export async function startFakeProviderServer(): Promise<FakeProviderServer> {
  const queue: ScriptedTurn[] = [];
  const requests: RecordedProviderRequest[] = [];
  let counter = 0;
  const timers = new Set<NodeJS.Timeout>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      counter += 1;
      const n = counter;
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      const format = formatOf(req.url ?? '');
      const turn = queue.shift();
      const send = (status: number, payload: unknown) => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        if (format === 'anthropic') res.setHeader('request-id', `req_${n}`);
        else res.setHeader('x-request-id', `req-${n}`);
        res.end(JSON.stringify(payload));
      };
      if (req.method !== 'POST' || !format || !turn) {
        send(500, errorBody(format, 500, `no scripted answer for request ${n}: ${req.method} ${req.url}`));
        return;
      }
      const model =
        typeof body?.model === 'string' ? body.model : (GEMINI_PATH.exec(req.url ?? '')?.[1] ?? 'unknown-model');
      if (turn.kind === 'tools') {
        const request = requests[requests.length - 1]!;
        turn.calls = turn.calls.map((c) => (typeof c.input === 'function' ? { ...c, input: c.input(request) } : c));
      }
      switch (turn.kind) {
        case 'error':
          send(turn.status, errorBody(format, turn.status, turn.message ?? `scripted HTTP ${turn.status}`));
          return;
        case 'raw':
          send(turn.status, turn.body);
          return;
        case 'delay': {
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (!res.destroyed) send(200, render(format, n, model, { kind: 'text', text: turn.text ?? 'late' }));
          }, turn.ms);
          timers.add(timer);
          return;
        }
        default:
          if (format === 'gemini' && (req.url ?? '').includes(':streamGenerateContent')) {
            // One chunk holds the whole turn: the Gemini API's SSE is `data:` lines with no event names.
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.end(`data: ${JSON.stringify(render(format, n, model, turn))}\r\n\r\n`);
          } else if (body?.stream === true && (format === 'anthropic' || format === 'responses')) {
            res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_${n}` });
            for (const [type, data] of streamEvents(format, n, model, turn)) {
              res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
            }
            res.end();
          } else {
            send(200, render(format, n, model, turn));
          }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...turns) => queue.push(...turns),
    pending: () => queue.length,
    reset: () => void queue.splice(0),
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

type Format = 'openai' | 'anthropic' | 'responses' | 'gemini';
const FORMATS: Record<string, Format> = {
  '/v1/chat/completions': 'openai',
  '/v1/messages': 'anthropic',
  '/v1/responses': 'responses',
};
const GEMINI_PATH = /^\/v1beta\/models\/([^/:?]+):(?:stream)?[gG]enerateContent(?:\?|$)/;

function formatOf(url: string): Format | null {
  return FORMATS[url.split('?')[0]!] ?? (GEMINI_PATH.test(url) ? 'gemini' : null);
}

type Answer = Extract<ScriptedTurn, { kind: 'tools' } | { kind: 'text' }>;

/** A turn as server-sent events: Anthropic's message_start … message_stop, or the Responses API's events. */
function streamEvents(format: 'anthropic' | 'responses', n: number, model: string, turn: Answer): [string, object][] {
  if (format === 'responses') {
    const response = render('responses', n, model, turn) as { output: unknown[] };
    const events: [string, object][] = [
      ['response.created', { response: { ...response, status: 'in_progress', output: [] } }],
    ];
    response.output.forEach((item, output_index) => {
      events.push(['response.output_item.added', { output_index, item }]);
      events.push(['response.output_item.done', { output_index, item }]);
    });
    events.push(['response.completed', { response }]);
    return events;
  }
  const message = render('anthropic', n, model, turn) as {
    content: ({ type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown })[];
    stop_reason: string;
    usage: { input_tokens: number; output_tokens: number };
  };
  const events: [string, object][] = [
    [
      'message_start',
      {
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { input_tokens: message.usage.input_tokens, output_tokens: 1 },
        },
      },
    ],
  ];
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(['content_block_start', { index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }]);
    } else {
      events.push(['content_block_start', { index, content_block: { ...block, input: {} } }]);
      events.push([
        'content_block_delta',
        { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
      ]);
    }
    events.push(['content_block_stop', { index }]);
  });
  events.push([
    'message_delta',
    {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    },
  ]);
  events.push(['message_stop', {}]);
  return events;
}

function render(format: Format, n: number, model: string, turn: Answer): unknown {
  const usage = { input: FAKE_USAGE.input + n, output: FAKE_USAGE.output };
  if (format === 'gemini') {
    const parts: unknown[] = [];
    if (turn.text) parts.push({ text: turn.text });
    if (turn.kind === 'tools') {
      turn.calls.forEach((call, i) =>
        parts.push({ functionCall: { id: call.id ?? `call_${n}_${i}`, name: call.name, args: call.input ?? {} } }),
      );
    }
    return {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
      },
      modelVersion: model,
      responseId: `resp_${n}`,
    };
  }
  if (format === 'responses') {
    const output: unknown[] = [];
    if (turn.text) {
      output.push({
        type: 'message',
        id: `msg_${n}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.text, annotations: [] }],
      });
    }
    if (turn.kind === 'tools') {
      turn.calls.forEach((call, i) =>
        output.push({
          type: 'function_call',
          id: `fc_${n}_${i}`,
          call_id: call.id ?? `call_${n}_${i}`,
          name: call.name,
          arguments: call.rawArguments ?? JSON.stringify(call.input ?? {}),
          status: 'completed',
        }),
      );
    }
    return {
      id: `resp_${n}`,
      object: 'response',
      created_at: 1700000000 + n,
      status: 'completed',
      model,
      output,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.output,
      },
    };
  }
  if (format === 'openai') {
    const toolCalls =
      turn.kind === 'tools'
        ? turn.calls.map((call, i) => ({
            id: call.id ?? `call_${n}_${i}`,
            type: 'function',
            function: { name: call.name, arguments: call.rawArguments ?? JSON.stringify(call.input ?? {}) },
          }))
        : undefined;
    return {
      id: `chatcmpl-${n}`,
      object: 'chat.completion',
      created: 1700000000 + n,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: turn.text ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
          finish_reason: toolCalls ? 'tool_calls' : 'stop',
        },
      ],
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
    };
  }
  const content: unknown[] = [];
  if (turn.text) content.push({ type: 'text', text: turn.text });
  if (turn.kind === 'tools') {
    turn.calls.forEach((call, i) =>
      content.push({ type: 'tool_use', id: call.id ?? `toolu_${n}_${i}`, name: call.name, input: call.input ?? {} }),
    );
  }
  return {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: turn.kind === 'tools' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
}

// The Gemini API's error shape (google.rpc.Status).
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
};

function errorBody(format: Format | null, status: number, message: string): unknown {
  if (format === 'gemini') return { error: { code: status, message, status: GOOGLE_STATUS[status] ?? 'INTERNAL' } };
  if (format === 'anthropic') {
    const type =
      status === 401
        ? 'authentication_error'
        : status === 403
          ? 'permission_error'
          : status === 429
            ? 'rate_limit_error'
            : status >= 500
              ? 'api_error'
              : 'invalid_request_error';
    return { type: 'error', error: { type, message } };
  }
  const type = status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_api_key' : 'server_error';
  return { error: { message, type, code: type } };
}

/**
 * The worker settings that point every preset CLI at `server`, as docs/agents.md tells an operator to:
 * Claude Code and Gemini CLI at the root (they append /v1, /v1beta), Codex and Aider at /v1, one key and model each.
 */
export function presetEndpointsEnv(server: FakeProviderServer): Record<string, string> {
  return presetEndpointsEnvEach({ 'claude-code': server, codex: server, aider: server, gemini: server });
}

/**
 * The same settings with each preset pointed at a server of its own, so that CLIs running at once each take
 * their turns from their own queue.
 */
export function presetEndpointsEnvEach(servers: Record<PresetBackend, FakeProviderServer>): Record<string, string> {
  const root = (server: FakeProviderServer) => server.baseUrl.replace(/\/v1$/, '');
  return {
    CLAUDE_CODE_BASE_URL: root(servers['claude-code']),
    CLAUDE_CODE_API_KEY: 'claude-code-test-key',
    CLAUDE_CODE_MODEL: 'scripted-claude',
    CODEX_BASE_URL: servers.codex.baseUrl,
    CODEX_API_KEY: 'codex-test-key',
    CODEX_MODEL: 'scripted-codex',
    AIDER_BASE_URL: servers.aider.baseUrl,
    AIDER_API_KEY: 'aider-test-key',
    AIDER_MODEL: 'openai/scripted-aider',
    // The Gemini SDK appends /v1beta/models/… itself.
    GEMINI_BASE_URL: root(servers.gemini),
    GEMINI_API_KEY: 'gemini-test-key',
    GEMINI_MODEL: 'scripted-gemini',
  };
}
