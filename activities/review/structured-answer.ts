import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import { recordExecution } from '../execution-records';
import { early } from '../in-order';
import { whileHeartbeating } from '../heartbeat';
import { modelCallCost } from '../usage';
import { createChatCompletion, ProviderError, type ChatMessage } from './chat-completions';

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

export interface StructuredRequest<T> {
  loopId: string;
  sequence: number;
  role: 'reviewer' | 'triage';
  model: string;
  messages: ChatMessage[];
  parse: (content: string) => Parsed<T>;
  /** Execution-record outcomes for a valid and an invalid answer (e.g. VALID_LEDGER / INVALID_LEDGER). */
  outcomes: { valid: string; invalid: string };
  /**
   * Where the records of answered calls go while they are written, for a caller that awaits them before
   * it sums what they spent; absent, each is awaited before the answer is used.
   */
  recording?: Promise<unknown>[];
}

export type StructuredAnswer<T> = { ok: true; value: T; responseIds: string[] } | { ok: false; errors: string[] };

/**
 * Asks the model for a JSON answer and validates it; an invalid answer is asked again with its
 * validation errors, a bounded number of times. Every call is recorded (docs/design.md §5.3). Provider errors
 * become ApplicationFailures: 429/5xx retryable by the activity policy, 401/403/other 4xx not.
 */
export async function askForStructuredAnswer<T>(
  deps: ActivityDeps,
  req: StructuredRequest<T>,
): Promise<StructuredAnswer<T>> {
  const messages = [...req.messages];
  const responseIds: string[] = [];
  let errors: string[] = [];
  for (let attempt = 0; attempt <= deps.config.llm.repairAttempts; attempt++) {
    const completion = await callModel(deps, req, messages);
    const parsed = req.parse(completion.content);
    const recorded = recordExecution(deps, {
      loopId: req.loopId,
      iterationSeq: req.sequence,
      role: req.role,
      kind: 'MODEL_CALL',
      provider: 'openai-compatible',
      model: completion.model,
      responseId: completion.responseId,
      requestId: completion.requestId,
      promptTokens: completion.promptTokens,
      completionTokens: completion.completionTokens,
      costUsd: modelCallCost(deps.config, completion.model, completion.promptTokens, completion.completionTokens),
      latencyMs: completion.latencyMs,
      outcome: parsed.ok ? req.outcomes.valid : req.outcomes.invalid,
      detail: parsed.ok ? null : parsed.errors.join('\n').slice(0, 4000),
    });
    if (req.recording) req.recording.push(early(recorded));
    else await recorded;
    if (completion.responseId) responseIds.push(completion.responseId);
    if (parsed.ok) return { ok: true, value: parsed.value, responseIds };
    errors = parsed.errors;
    messages.push({ role: 'assistant', content: completion.content }, repairMessage(errors));
  }
  return { ok: false, errors };
}

function repairMessage(errors: string[]): ChatMessage {
  return {
    role: 'user',
    content: `Your answer is not valid:\n${errors.map((e) => `- ${e}`).join('\n')}\nAnswer again with only the corrected JSON object.`,
  };
}

async function callModel<T>(deps: ActivityDeps, req: StructuredRequest<T>, messages: ChatMessage[]) {
  try {
    return await whileHeartbeating(
      createChatCompletion({
        baseUrl: deps.config.llm.baseUrl,
        apiKey: deps.config.llm.apiKey,
        model: req.model,
        messages,
        timeoutMs: deps.config.llm.timeoutSeconds * 1000,
        signal: Context.current().cancellationSignal,
      }),
      `${req.role} #${req.sequence}`,
    );
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    await recordExecution(deps, {
      loopId: req.loopId,
      iterationSeq: req.sequence,
      role: req.role,
      kind: 'MODEL_CALL',
      provider: 'openai-compatible',
      model: req.model,
      latencyMs: 0,
      outcome: err.status ? `HTTP_${err.status}` : 'UNREACHABLE',
      detail: err.message.slice(0, 4000),
    });
    throw ApplicationFailure.create({ type: 'ModelProviderError', message: err.message, nonRetryable: !err.retryable });
  }
}
