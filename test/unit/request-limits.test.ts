import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { registerErrorHandler } from '../../api/errors';
import { KEYWORD_VALUE_MAX_BYTES, keywordValue } from '../../api/loop-submission';
import { MAX_NESTING_DEPTH, rejectUnstorableText } from '../../api/storable-input';

// Limits found by fuzzing the API (test/e2e/api-fuzz.e2e.test.ts): each of these inputs was a 500.

describe('nesting depth', () => {
  let app: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    app = Fastify({ logger: false });
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    registerErrorHandler(app);
    rejectUnstorableText(app);
    app
      .withTypeProvider<ZodTypeProvider>()
      .post('/anything', { schema: { body: z.unknown() } }, async () => ({ ok: true }));
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  const post = async (text: string) => {
    const res = await fetch(`${baseUrl}/anything`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    return { status: res.status, body: (await res.json()) as { message?: string; ok?: boolean } };
  };
  /** `{"a":[[…[1]…]]}`: the body object, then `arrays` nested arrays (1 + arrays levels). */
  const nested = (arrays: number) => `{"a":${'['.repeat(arrays)}1${']'.repeat(arrays)}}`;

  test(`${MAX_NESTING_DEPTH} levels (the body's own counts) pass; one more is a 400 naming where, however deep it goes`, async () => {
    expect(await post(nested(MAX_NESTING_DEPTH - 1))).toEqual({ status: 200, body: { ok: true } });
    const path = `body.a${'.0'.repeat(MAX_NESTING_DEPTH - 1)}`;
    for (const arrays of [MAX_NESTING_DEPTH, 5_000, 100_000]) {
      expect(await post(nested(arrays))).toMatchObject({
        status: 400,
        body: { message: `${path}: nested deeper than ${MAX_NESTING_DEPTH} levels` },
      });
    }
  });

  test('an unstorable string is still named first, even below the depth limit', async () => {
    const res = await post(`{"a":${'['.repeat(50)}"\\u0000"${']'.repeat(50)}}`);
    expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(/^body\.a(\.0){50}: contains a NUL/)]);
  });
});

test('a search attribute value keeps at most KEYWORD_VALUE_MAX_BYTES of UTF-8, cut between characters', () => {
  expect(keywordValue('/srv/repo')).toBe('/srv/repo');
  const ascii = 'a'.repeat(KEYWORD_VALUE_MAX_BYTES);
  expect(keywordValue(ascii + 'b')).toBe(ascii);
  for (const char of ['é', '中', '😀']) {
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const cut = keywordValue(prefix + char.repeat(2_000));
      const bytes = Buffer.byteLength(cut, 'utf8');
      expect(bytes).toBeLessThanOrEqual(KEYWORD_VALUE_MAX_BYTES);
      expect(bytes).toBeGreaterThan(KEYWORD_VALUE_MAX_BYTES - Buffer.byteLength(char, 'utf8'));
      expect(cut).toBe(prefix + char.repeat((cut.length - prefix.length) / char.length));
    }
  }
});
