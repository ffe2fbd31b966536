import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server speaking the OpenAI Chat Completions wire format with scripted answers.

export interface ScriptedAnswer {
  /** HTTP status; 200 sends a chat completion whose message content is `content`. */
  status?: number;
  content?: string;
  body?: unknown;
  /** The answer is sent once this settles: the request stays open until then, as a slow model's would. */
  hold?: Promise<unknown>;
}

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: { model: string; messages: Array<{ role: string; content: string }> };
}

export interface FakeLlmServer {
  baseUrl: string;
  requests: RecordedRequest[];
  /** Queues reviewer answers; each review request takes the next one. */
  enqueue(...answers: ScriptedAnswer[]): void;
  /**
   * Queues triage answers. With none queued, triage requests get a scripted confirmation: every
   * finding in the request judged VALID as the reviewer claimed.
   */
  enqueueTriage(...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

export async function startFakeLlmServer(): Promise<FakeLlmServer> {
  const queue: ScriptedAnswer[] = [];
  const triageQueue: ScriptedAnswer[] = [];
  const requests: RecordedRequest[] = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as RecordedRequest['body'];
      requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const isTriage = body.messages?.[0]?.content?.startsWith('You triage') ?? false;
      const answer = isTriage
        ? (triageQueue.shift() ?? { content: confirmAll(body.messages[1]?.content ?? '') })
        : queue.shift();
      counter += 1;
      if (answer?.hold) void answer.hold.then(() => respond(req, res, body, answer, counter));
      else respond(req, res, body, answer, counter);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...answers) => queue.push(...answers),
    enqueueTriage: (...answers) => triageQueue.push(...answers),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function respond(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: RecordedRequest['body'],
  answer: ScriptedAnswer | undefined,
  counter: number,
): void {
  res.setHeader('content-type', 'application/json');
  res.setHeader('x-request-id', `req-${counter}`);
  if (!answer || req.url !== '/v1/chat/completions') {
    res.statusCode = 500;
    res.end(JSON.stringify({ error: { message: `no scripted answer for request ${counter} to ${req.url}` } }));
    return;
  }
  res.statusCode = answer.status ?? 200;
  res.end(
    JSON.stringify(
      answer.body ?? {
        id: `chatcmpl-${counter}`,
        object: 'chat.completion',
        created: 1700000000 + counter,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.content ?? '' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100 + counter, completion_tokens: 20, total_tokens: 120 + counter },
      },
    ),
  );
}

export const cleanLedger = JSON.stringify({ findings: [] });

/** A triage answer that confirms every finding of the request as VALID. */
function confirmAll(prompt: string): string {
  const ids = [...prompt.matchAll(/^## ([A-Z]{3}-\d{3}) /gm)].map((m) => m[1]);
  return JSON.stringify({
    decisions: ids.map((findingId) => ({
      findingId,
      validity: 'VALID',
      reasoning: 'confirmed by the scripted triage',
    })),
  });
}

export function blockerLedger(title = 'sum() loses precision for large integers'): string {
  return JSON.stringify({
    findings: [
      {
        id: 'COR-001',
        title,
        topic: 'correctness',
        severity: 'BLOCKER',
        validity: 'VALID',
        disposition: 'STRONG',
        location: { file: 'src/sum.js', startLine: 1, endLine: 3 },
        acceptanceCriteria: ['AC-1'],
        evidence: 'sum(2**53, 1) returns 9007199254740992',
        failureScenario: 'callers adding large ids get wrong totals',
        reproduction: 'node -e "console.log(require(\'./src/sum\').sum(2**53, 1))"',
        concreteAlternativeDiff: '- return a + b;\n+ return Number(BigInt(a) + BigInt(b));',
      },
    ],
  });
}
