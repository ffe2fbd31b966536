import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { registerErrorHandler } from '../../api/errors';
import { rejectUnstorableText } from '../../api/storable-input';
import { loopRequestSchema } from '../../domain/loop-request';
import { unstorableCharacter } from '../../domain/storable-text';
import { loopRequest } from '../support/loop-request';

// Strings PostgreSQL refuses (NUL, unpaired surrogates) are a 400 naming the field, wherever they are.

/** Small seeded generator (mulberry32): the same cases on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ground truth: PostgreSQL stores a string iff it has no NUL and survives UTF-8 (lone surrogates do not). */
const storable = (s: string) => !s.includes('\u0000') && Buffer.from(s, 'utf8').toString('utf8') === s;

test('unstorableCharacter agrees with UTF-8 round trip on random strings of awkward code units', () => {
  const next = random(11);
  const awkward = [0x0, 0x1, 0x7f, 0x85, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfeff, 0xfffe, 0xffff, 0x41, 0xe9];
  for (let i = 0; i < 5000; i++) {
    const units = Array.from(
      { length: 1 + Math.floor(next() * 6) },
      () => awkward[Math.floor(next() * awkward.length)]!,
    );
    const text = String.fromCharCode(...units);
    expect([JSON.stringify(text), unstorableCharacter(text) === null]).toEqual([JSON.stringify(text), storable(text)]);
  }
  expect(unstorableCharacter('a\u0000b')).toBe(
    'contains a NUL character (\\u0000) at position 1, which cannot be stored',
  );
  expect(unstorableCharacter('😀 \uffff \ufeff')).toBeNull();
});

describe('over HTTP', () => {
  let app: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    app = Fastify({ logger: false });
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    registerErrorHandler(app);
    rejectUnstorableText(app);
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.post('/loops', { schema: { body: loopRequestSchema } }, async () => ({ ok: true }));
    r.post('/anything/:name', { schema: { body: z.unknown(), params: z.object({ name: z.string() }) } }, async () => ({
      ok: true,
    }));
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  /** `body` as JSON, or a string as it is (JSON.stringify itself cannot write very deep nesting). */
  const post = async (url: string, body: unknown) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const res = await fetch(`${baseUrl}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    return { status: res.status, body: (await res.json()) as { message?: string; ok?: boolean } };
  };

  /** Every string in a loop request, with its path. */
  function stringLeaves(value: unknown, path: string[] = []): string[][] {
    if (typeof value === 'string') return [path];
    if (value && typeof value === 'object')
      return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
    return [];
  }
  function withLeaf(value: unknown, path: string[], change: (s: string) => string): unknown {
    const copy = structuredClone(value) as Record<string, unknown>;
    let at = copy;
    for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
    const last = path[path.length - 1]!;
    at[last] = change(at[last] as string);
    return copy;
  }

  test('a valid loop request passes; one bad character in any of its strings is a 400 naming that string', async () => {
    const valid = loopRequest('/srv/repo', ['node', 'maker.js']);
    expect((await post('/loops', valid)).status).toBe(200);
    const next = random(7);
    const bad = ['\u0000', '\ud800', '\udfff'];
    const leaves = stringLeaves(valid);
    expect(leaves.length).toBeGreaterThan(10);
    for (const leaf of leaves) {
      for (let round = 0; round < 3; round++) {
        const char = bad[Math.floor(next() * bad.length)]!;
        const body = withLeaf(valid, leaf, (s) => {
          const at = Math.floor(next() * (s.length + 1));
          return s.slice(0, at) + char + s.slice(at);
        });
        const res = await post('/loops', body);
        expect([leaf.join('.'), res.status, res.body.message]).toEqual([
          leaf.join('.'),
          400,
          expect.stringMatching(`^body\\.${leaf.join('\\.')}: contains`),
        ]);
      }
    }
  });

  test('keys, params and deep nesting are covered too', async () => {
    expect((await post('/anything/x', { 'a\u0000': 1 })).body.message).toBe(
      'body: the key "a\\u0000" contains a NUL character (\\u0000) at position 1, which cannot be stored',
    );
    expect((await post('/anything/x%00', {})).body.message).toMatch(/^params\.name: contains a NUL character/);
    const res = await post('/anything/x', '['.repeat(100_000) + '"\\u0000"' + ']'.repeat(100_000));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body(\.0){100000}: contains a NUL/);
  });
});
