import type { FastifyInstance } from 'fastify';
import { sanitise, sanitiseTokens } from '../domain/sanitise';

// What the API answers and logs leaves sanitised, whatever a route returns or a log call carries.

/**
 * JSON answers have their string values sanitised before serialisation; plain text (an evidence log,
 * stored sanitised already) as it is sent. Only the service's secrets and credential-shaped tokens:
 * answers hand back what users wrote, where `token: …` may be their own text.
 */
export function sanitiseAnswers(app: FastifyInstance): void {
  app.addHook('preSerialization', async (_request, _reply, payload: unknown) => sanitisedAnswer(payload));
  app.addHook('onSend', async (_request, reply, payload) =>
    typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/plain')
      ? sanitiseTokens(payload)
      : payload,
  );
}

/** A value sent outside Fastify's serialisation (the event stream), sanitised like every JSON answer. */
export function sanitisedAnswer(value: unknown): unknown {
  return mapStrings(value, (s) => sanitiseTokens(s));
}

/**
 * pino `hooks.streamWrite`: a log line with its string values sanitised. The line is parsed first,
 * because JSON escapes (`\n` before a token) would hide where a token starts.
 */
export function sanitiseLogLine(line: string): string {
  try {
    return `${JSON.stringify(mapStrings(JSON.parse(line), (s) => sanitise(s)))}\n`;
  } catch {
    return sanitise(line);
  }
}

/** Strings anywhere in arrays and plain objects; anything else (dates, buffers) as it is. */
function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (isPlainObject(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, map)]));
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
