import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unstorableCharacter } from '../domain/storable-text';
import { ApiError } from './errors';

/**
 * Refuses, with 400 naming the field, any request whose body, path or query holds a string PostgreSQL
 * cannot store — checked once here for every route instead of in each schema, before any handler writes.
 */
export function rejectUnstorableText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const problem = firstUnstorable(request);
    if (problem) throw new ApiError(400, problem);
  });
}

/** The first unstorable string (or object key) in document order, as `<where>.<path>: <problem>`. */
function firstUnstorable(request: FastifyRequest): string | null {
  // Iterative, as a stack popped from the end (children pushed in reverse): a deeply nested body must not overflow the call stack.
  const pending: Array<[path: string, value: unknown]> = [
    ['querystring', request.query],
    ['params', request.params],
    ['body', request.body],
  ];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [path, value] = next;
    if (typeof value === 'string') {
      const problem = unstorableCharacter(value);
      if (problem) return `${path}: ${problem}`;
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      const badKey = entries.find(([key]) => unstorableCharacter(key));
      if (badKey) return `${path}: the key ${JSON.stringify(badKey[0])} ${unstorableCharacter(badKey[0])}`;
      for (const [key, child] of entries.reverse()) pending.push([`${path}.${key}`, child]);
    }
  }
  return null;
}
