import { z } from 'zod';

// Minimal client for an OpenAI-compatible Chat Completions endpoint (POST {baseUrl}/chat/completions).

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatCompletion {
  responseId: string | null;
  requestId: string | null;
  model: string;
  content: string;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number;
}

export interface ChatRequest {
  baseUrl: string;
  apiKey: string;
  model: string;
  messages: ChatMessage[];
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A provider answer that is not a usable completion; `retryable` follows the HTTP status. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

const completionSchema = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).optional(),
});

export async function createChatCompletion(req: ChatRequest): Promise<ChatCompletion> {
  const started = Date.now();
  const signals = [AbortSignal.timeout(req.timeoutMs), ...(req.signal ? [req.signal] : [])];
  let response: Response;
  try {
    response = await fetch(`${req.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${req.apiKey}` },
      body: JSON.stringify({
        model: req.model,
        messages: req.messages,
        temperature: 0,
        response_format: { type: 'json_object' },
      }),
      signal: AbortSignal.any(signals),
    });
  } catch (err) {
    if (req.signal?.aborted) throw err;
    throw new ProviderError(`the model endpoint could not be reached: ${(err as Error).message}`, null, true);
  }
  const requestId = response.headers.get('x-request-id');
  const text = await response.text();
  if (!response.ok) {
    const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
    throw new ProviderError(
      `the model endpoint answered HTTP ${response.status}: ${text.slice(0, 500)}`,
      response.status,
      retryable,
    );
  }
  let body: z.infer<typeof completionSchema>;
  try {
    body = completionSchema.parse(JSON.parse(text));
  } catch {
    throw new ProviderError(
      `the model endpoint answered something that is not a chat completion: ${text.slice(0, 500)}`,
      response.status,
      true,
    );
  }
  return {
    responseId: body.id ?? null,
    requestId,
    model: body.model ?? req.model,
    content: body.choices[0]!.message.content ?? '',
    promptTokens: body.usage?.prompt_tokens ?? null,
    completionTokens: body.usage?.completion_tokens ?? null,
    latencyMs: Date.now() - started,
  };
}
