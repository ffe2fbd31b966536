import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unstorableCharacter } from '../domain/storable-text';
import { ApiError } from './errors';

/**
 * Refuses, with 400 naming the field, any request whose body, path or query holds a string PostgreSQL
 * cannot store, or nests deeper than MAX_NESTING_DEPTH — checked once here for every route instead of in
 * each schema, before any handler writes.
 */
export function rejectUnstorableText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const problem = firstUnstorable(request) ?? firstTooDeep(request);
    if (problem) throw new ApiError(400, problem);
  });
}

/**
 * Far deeper than any request the API defines needs (a loop request nests 6 levels), far shallower than
 * what overflows the recursive code a value can reach: canonical JSON for hashes, JSON for Temporal
 * payloads, PostgreSQL's JSON parser. The one free-form field, an amendment's `acceptanceCriteria`
 * (validated by the workflow), let 5,000 nested arrays overflow the stack: a 500.
 */
export const MAX_NESTING_DEPTH = 32;

/** The first object or array nested deeper than MAX_NESTING_DEPTH (the body itself is the first level), as `<where>.<path>: <problem>`. */
function firstTooDeep(request: FastifyRequest): string | null {
  const pending: Array<[path: string, value: unknown, depth: number]> = [
    ['querystring', request.query, 0],
    ['params', request.params, 0],
    ['body', request.body, 0],
  ];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [path, value, depth] = next;
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_NESTING_DEPTH) return `${path}: nested deeper than ${MAX_NESTING_DEPTH} levels`;
    for (const [key, child] of Object.entries(value).reverse()) pending.push([`${path}.${key}`, child, depth + 1]);
  }
  return null;
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
