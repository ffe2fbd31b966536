// The built-in LLM maker: a tool-using coding agent over an OpenAI-compatible Chat Completions API or
// the Anthropic Messages API, bounded by a step limit, every tool call confined to the workspace.
//
// Library choice: the provider wire formats and tool calling come from the Vercel AI SDK v6 (`ai`,
// `@ai-sdk/openai`, `@ai-sdk/anthropic`), not a hand-rolled client. It is well kept, speaks both APIs
// (tool declarations, tool-call parsing, tool results in each provider's own shape: OpenAI
// `role: 'tool'` messages, Anthropic `tool_result` blocks with `is_error`), takes a custom baseURL,
// works from CommonJS on Node 20 (v7 needs Node 22, hence v6), and exposes per-call response
// metadata (raw body, headers) and token usage. What we keep in our hands, on purpose:
//  - the agent loop: one generateText call per model turn with tools that have no `execute`, so the
//    SDK never runs a tool or loops on its own. That gives an exact record per HTTP call (latency,
//    response id, request id, tokens, outcome, also for the call that failed), our own tool-result
//    texts (refusals and "arguments were not valid JSON" read the way we want), heartbeats and
//    cancellation checks between tools, and a plain step limit.
//  - retries: `maxRetries: 0`. A 429/5xx/network failure becomes a retryable ProviderCallError and
//    Temporal's activity retry policy does the backoff; 401/403/other 4xx are not retryable.
//  - the response id: taken from the provider's raw body, never the SDK's generated fallback id, so a
//    recorded id is always one the provider issued (docs/design.md §5.3 truthful reporting).
import { NETWORK_ERROR_CODES } from '../../domain/network-errors';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import {
  APICallError,
  generateText,
  InvalidToolInputError,
  jsonSchema,
  NoSuchToolError,
  RetryError,
  tool,
  type JSONSchema7,
  type LanguageModel,
  type ModelMessage,
  type ToolResultPart,
  type ToolSet,
} from 'ai';
import { workspaceRoot } from './workspace-paths';
import {
  executeWorkspaceTool,
  toolDescription,
  toolJsonSchema,
  WORKSPACE_TOOLS,
  type ToolContext,
  type ToolOutcome,
  type WorkspaceToolName,
} from './workspace-tools';
import type { Sandbox } from '../sandbox/types';

export interface LlmMakerOptions {
  provider: 'openai' | 'anthropic';
  /** Including the version segment, e.g. https://api.openai.com/v1 or https://api.anthropic.com/v1. */
  baseUrl: string;
  apiKey: string;
  model: string;
  workspace: string;
  /** Confines the commands the agent runs. */
  sandbox: Sandbox;
  /** The task (contract + directives), built elsewhere. */
  prompt: string;
  /** Model turns; the loop stops when reached. */
  maxSteps: number;
  /** argv prefixes the agent may run, e.g. [['npm','test'],['node','--test']]. */
  allowedCommands: string[][];
  commandTimeoutMs: number;
  requestTimeoutMs: number;
  /** Activity cancellation. */
  signal?: AbortSignal;
  heartbeat?: () => void;
  /**
   * Output token cap per model turn. Unset: the SDK's per-model default (for a model it does not know,
   * the Anthropic provider sends 128000 and warns, which a smaller model would refuse with HTTP 400).
   */
  maxOutputTokens?: number;
}

export interface ModelCallRecord {
  provider: string;
  model: string;
  responseId: string | null;
  requestId: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number;
  /** The finish reason of a completed call ('tool-calls', 'stop', 'length', …) or why it failed ('http_429', 'timeout', …). */
  outcome: string;
}

export interface LlmMakerResult {
  stopReason: 'completed' | 'step_limit';
  steps: number;
  calls: ModelCallRecord[];
  finalMessage: string;
  toolCalls: Array<{ tool: string; ok: boolean; summary: string }>;
}

/** A model call that did not produce a usable answer. 429/5xx/network/timeout are retryable; 401/403/other 4xx are not. */
export class ProviderCallError extends Error {
  override readonly name = 'ProviderCallError';

  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    /** Every call made so far in this run, the failed one last, so they can be recorded. */
    readonly calls: ModelCallRecord[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The run was cancelled (its activity was): the calls it had made by then, so they can be recorded. */
export class LlmMakerCancelled extends Error {
  override readonly name = 'LlmMakerCancelled';

  constructor(
    readonly calls: ModelCallRecord[],
    options?: { cause?: unknown },
  ) {
    super('the built-in maker was cancelled', options);
  }
}

const MODEL_CALL_HEARTBEAT_MS = 5_000;

function systemPrompt(allowedCommands: string[][]): string {
  const commands = allowedCommands.length ? allowedCommands.map((prefix) => prefix.join(' ')).join('; ') : 'none';
  return [
    'You are a coding agent working in a git workspace. Use the tools to inspect and change the files so that the task is done.',
    'All paths are relative to the workspace root; paths outside it, and writes into .git, are refused.',
    `run_command runs a program without a shell, only when its argv starts with one of: ${commands}.`,
    'Do not commit; the workspace is checkpointed for you. A tool error is a result you can read and recover from.',
    'When the task is done, answer with a short summary of what you changed and call no tool.',
  ].join('\n');
}

function createModel(options: LlmMakerOptions): LanguageModel {
  const baseURL = options.baseUrl.replace(/\/+$/, '');
  if (options.provider === 'anthropic')
    return createAnthropic({ baseURL, apiKey: options.apiKey }).messages(options.model);
  // .chat(): Chat Completions. The provider's default model would use the Responses API instead.
  return createOpenAI({ baseURL, apiKey: options.apiKey }).chat(options.model);
}

function declaredTools(allowedCommands: string[][]): ToolSet {
  const tools: ToolSet = {};
  for (const name of Object.keys(WORKSPACE_TOOLS) as WorkspaceToolName[]) {
    // No `execute`: the SDK returns the calls and the loop below runs them. No validation here either:
    // executeWorkspaceTool validates with zod and answers the model with a readable error.
    tools[name] = tool({
      description: toolDescription(name, allowedCommands),
      inputSchema: jsonSchema<unknown>(toolJsonSchema(name) as JSONSchema7),
    });
  }
  return tools;
}

export async function runLlmMaker(options: LlmMakerOptions): Promise<LlmMakerResult> {
  if (!Number.isInteger(options.maxSteps) || options.maxSteps < 1) {
    throw new Error(`maxSteps must be a positive integer, got ${options.maxSteps}`);
  }
  const calls: ModelCallRecord[] = [];
  try {
    return await runSteps(options, calls);
  } catch (error) {
    if (options.signal?.aborted) throw new LlmMakerCancelled(calls, { cause: error });
    throw error;
  }
}

async function runSteps(options: LlmMakerOptions, calls: ModelCallRecord[]): Promise<LlmMakerResult> {
  const model = createModel(options);
  const tools = declaredTools(options.allowedCommands);
  const ctx: ToolContext = {
    root: await workspaceRoot(options.workspace),
    sandbox: options.sandbox,
    allowedCommands: options.allowedCommands,
    commandTimeoutMs: options.commandTimeoutMs,
    signal: options.signal,
    heartbeat: options.heartbeat,
  };
  const toolCalls: LlmMakerResult['toolCalls'] = [];
  const messages: ModelMessage[] = [{ role: 'user', content: options.prompt }];
  let finalMessage = '';

  for (let step = 1; step <= options.maxSteps; step++) {
    options.signal?.throwIfAborted();
    options.heartbeat?.();
    const turn = await callModel(options, model, tools, messages, calls);
    finalMessage = turn.text;
    messages.push(...turn.assistantMessages);
    if (turn.toolCalls.length === 0) {
      return { stopReason: 'completed', steps: step, calls, finalMessage, toolCalls };
    }
    const results: ToolResultPart[] = [];
    for (const call of turn.toolCalls) {
      options.heartbeat?.();
      const outcome = call.invalid
        ? invalidCallOutcome(call)
        : await executeWorkspaceTool(call.toolName, call.input, ctx);
      toolCalls.push({ tool: call.toolName, ok: outcome.ok, summary: outcome.summary });
      results.push({
        type: 'tool-result',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: outcome.ok ? { type: 'text', value: outcome.output } : { type: 'error-text', value: outcome.output },
      });
    }
    messages.push({ role: 'tool', content: results });
  }
  return { stopReason: 'step_limit', steps: options.maxSteps, calls, finalMessage, toolCalls };
}

interface ModelToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  invalid?: boolean;
  error?: unknown;
}

interface ModelTurn {
  text: string;
  /** The assistant message as the SDK converts it back for the next request (text + tool calls). */
  assistantMessages: ModelMessage[];
  toolCalls: ModelToolCall[];
}

async function callModel(
  options: LlmMakerOptions,
  model: LanguageModel,
  tools: ToolSet,
  messages: ModelMessage[],
  calls: ModelCallRecord[],
): Promise<ModelTurn> {
  const timeout = AbortSignal.timeout(options.requestTimeoutMs);
  const abortSignal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const heartbeat = options.heartbeat && setInterval(options.heartbeat, MODEL_CALL_HEARTBEAT_MS);
  const started = Date.now();
  const record = (fields: Partial<ModelCallRecord> & { outcome: string }): void => {
    calls.push({
      provider: options.provider,
      model: options.model,
      responseId: null,
      requestId: null,
      promptTokens: null,
      completionTokens: null,
      latencyMs: Date.now() - started,
      ...fields,
    });
  };
  try {
    const result = await generateText({
      model,
      system: systemPrompt(options.allowedCommands),
      messages,
      tools,
      maxRetries: 0,
      abortSignal,
      ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
    });
    const body = result.response.body as { id?: unknown; model?: unknown } | undefined;
    record({
      // The provider's own model name when it reports one (e.g. a dated snapshot of an alias).
      model: typeof body?.model === 'string' ? body.model : options.model,
      responseId: typeof body?.id === 'string' ? body.id : null,
      requestId: requestIdOf(result.response.headers),
      promptTokens: result.usage.inputTokens ?? null,
      completionTokens: result.usage.outputTokens ?? null,
      outcome: result.finishReason,
    });
    return {
      text: result.text,
      // The SDK also appends its own tool-error messages for unparsable calls; those are replaced by ours.
      assistantMessages: result.response.messages.filter((message) => message.role === 'assistant'),
      toolCalls: result.toolCalls as ModelToolCall[],
    };
  } catch (error) {
    // Activity cancellation is not a provider failure: the call is recorded as cut short, the cancel goes on.
    if (options.signal?.aborted) {
      record({ outcome: 'cancelled' });
      throw error;
    }
    throw providerCallError(error, timeout.aborted, options, record, calls);
  } finally {
    clearInterval(heartbeat);
  }
}

function providerCallError(
  error: unknown,
  timedOut: boolean,
  options: LlmMakerOptions,
  record: (fields: Partial<ModelCallRecord> & { outcome: string }) => void,
  calls: ModelCallRecord[],
): ProviderCallError {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  const where = `${options.provider} model ${options.model}`;
  if (timedOut) {
    record({ outcome: 'timeout' });
    return new ProviderCallError(`${where} did not answer within ${options.requestTimeoutMs} ms`, null, true, calls, {
      cause,
    });
  }
  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode ?? null;
    const requestId = requestIdOf(cause.responseHeaders);
    if (status === null) {
      record({ outcome: 'network_error', requestId });
      return new ProviderCallError(`${where} could not be reached: ${cause.message}`, null, true, calls, { cause });
    }
    if (status >= 200 && status < 300) {
      // A successful status whose body is not a usable completion: the provider's transient fault.
      record({ outcome: 'invalid_response', requestId });
      return new ProviderCallError(
        `${where} answered something that is not a usable response: ${cause.message}`,
        status,
        true,
        calls,
        { cause },
      );
    }
    record({ outcome: `http_${status}`, requestId });
    const retryable = status === 408 || status === 429 || status >= 500;
    const body = cause.responseBody ? `: ${cause.responseBody.slice(0, 500)}` : '';
    return new ProviderCallError(`${where} answered HTTP ${status}${body}`, status, retryable, calls, { cause });
  }
  const message = errorMessage(cause);
  if (isNetworkFailure(cause)) {
    record({ outcome: 'network_error' });
    return new ProviderCallError(`${where} could not be reached: ${deepestMessage(cause)}`, null, true, calls, {
      cause,
    });
  }
  const name = (cause as Error | undefined)?.name ?? '';
  // A body that is not a valid completion is the provider's transient fault, as in the reviewer's client.
  const invalidResponse = [
    'AI_JSONParseError',
    'AI_TypeValidationError',
    'AI_InvalidResponseDataError',
    'AI_EmptyResponseBodyError',
    'AI_NoContentGeneratedError',
  ].includes(name);
  record({ outcome: invalidResponse ? 'invalid_response' : 'error' });
  return new ProviderCallError(`${where} call failed: ${message}`, null, invalidResponse, calls, { cause });
}

function errorMessage(error: unknown): string {
  return typeof (error as Error | undefined)?.message === 'string' ? (error as Error).message : String(error);
}

/** "fetch failed" says little; its cause says "connect ECONNREFUSED 127.0.0.1:1234". */
function deepestMessage(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5 && (current as { cause?: unknown } | undefined)?.cause; depth++) {
    current = (current as { cause: unknown }).cause;
  }
  return errorMessage(current);
}

// The SDK wraps fetch failures in APICallError, but recognises them with `instanceof`, which fails for
// errors from another realm (Jest's sandbox, for one). Duck typing: undici's "fetch failed" TypeError,
// or a system error code anywhere in the cause chain.
function isNetworkFailure(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (
    let current = error;
    current && typeof current === 'object' && !seen.has(current);
    current = (current as { cause?: unknown }).cause
  ) {
    seen.add(current);
    const { name, message, code } = current as { name?: unknown; message?: unknown; code?: unknown };
    if (name === 'TypeError' && message === 'fetch failed') return true;
    if (typeof code === 'string' && (NETWORK_ERROR_CODES.has(code) || code.startsWith('UND_ERR_'))) return true;
  }
  return false;
}

function requestIdOf(headers: Record<string, string> | undefined): string | null {
  return headers?.['request-id'] ?? headers?.['x-request-id'] ?? null;
}

function invalidCallOutcome(call: ModelToolCall): ToolOutcome {
  if (NoSuchToolError.isInstance(call.error)) {
    const known = Object.keys(WORKSPACE_TOOLS).join(', ');
    return {
      ok: false,
      output: `error: unknown tool "${call.toolName}"; the available tools are ${known}`,
      summary: `unknown tool ${call.toolName}`,
    };
  }
  const raw = typeof call.input === 'string' ? call.input : JSON.stringify(call.input);
  // InvalidToolInputError → JSONParseError → the SyntaxError, whose message says where the JSON broke.
  let cause: unknown = InvalidToolInputError.isInstance(call.error) ? call.error.cause : undefined;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const detail = cause instanceof Error ? ` (${cause.message})` : '';
  return {
    ok: false,
    output:
      `error: the arguments of ${call.toolName} were not valid JSON${detail}; nothing was run. ` +
      `Send the arguments as one JSON object. Received: ${truncate(raw ?? '', 500)}`,
    summary: `${call.toolName}: arguments were not valid JSON`,
  };
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
