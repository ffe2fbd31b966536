import Fastify, { type FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { apiKeyRoutes } from '../../api/auth/api-key-routes';
import {
  createApiKey,
  ensureBootstrapAdminKey,
  hashApiKey,
  listApiKeys,
  revokeApiKey,
  verifyApiKey,
  type CreatedApiKey,
} from '../../api/auth/api-keys';
import { API_KEY_REDACT_PATHS, authErrorResponses, registerAuth, requirePrincipal } from '../../api/auth/auth-plugin';
import { registerErrorHandler } from '../../api/errors';
import { runAdminCommand } from '../../service/admin-main';
import { createTestDatabase, type TestDatabase } from '../support/database';

// A tiny app with the auth plugin, a few dummy routes needing different roles, and the key routes.
async function buildTestApp(
  db: TestDatabase,
  options: { logs?: string[]; max?: number } = {},
): Promise<FastifyInstance> {
  const logs = options.logs;
  const app = Fastify({
    logger: logs
      ? {
          level: 'trace',
          stream: { write: (line: string) => void logs.push(line) },
          redact: [...API_KEY_REDACT_PATHS],
          // Log the headers on purpose, so the test proves the redaction (the default serializer omits them).
          serializers: {
            req: (req: { method: string; url: string; headers: unknown }) => ({
              method: req.method,
              url: req.url,
              headers: req.headers,
            }),
          },
        }
      : false,
    genReqId: () => crypto.randomUUID(),
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);
  await registerAuth(app, { prisma: db.prisma, rateLimit: { max: options.max ?? 1000, timeWindowMs: 60_000 } });
  const r = app.withTypeProvider<ZodTypeProvider>();
  const principalSchema = z.object({ keyId: z.string(), name: z.string(), role: z.string() });
  r.get('/healthz', async () => ({ ok: true }));
  r.get('/docs/json', async () => ({ openapi: '3' }));
  r.get('/v1/things', { schema: { response: { 200: principalSchema, ...authErrorResponses } } }, async (request) =>
    requirePrincipal(request),
  );
  r.post(
    '/v1/things',
    { config: { access: 'submitter' }, schema: { body: z.object({ n: z.number() }) } },
    async (request) => ({
      n: request.body.n,
      by: requirePrincipal(request).name,
    }),
  );
  r.post('/v1/decide', { config: { access: 'approver' } }, async (request) => ({
    actor: requirePrincipal(request).name,
  }));
  r.post('/v1/unconfigured', async () => ({ ok: true }));
  await app.register(apiKeyRoutes, { prisma: db.prisma });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

// Real HTTP rather than app.inject: light-my-request requires `cookie` 2 (ESM-only), which jest's CommonJS
// runtime cannot load. The app listens on an ephemeral port.
interface Response {
  statusCode: number;
  headers: Record<string, string>;
  json(): any;
}
async function request(
  app: FastifyInstance,
  options: { method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: unknown },
): Promise<Response> {
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('app is not listening');
  const res = await fetch(`http://127.0.0.1:${address.port}${options.url}`, {
    method: options.method,
    headers: { ...(options.payload !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.payload !== undefined ? JSON.stringify(options.payload) : undefined,
  });
  const text = await res.text();
  return { statusCode: res.status, headers: Object.fromEntries(res.headers.entries()), json: () => JSON.parse(text) };
}

function expectError(
  res: { statusCode: number; json(): any },
  statusCode: number,
  error: string,
  message?: RegExp,
): void {
  expect(res.statusCode).toBe(statusCode);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['error', 'message', 'requestId', 'statusCode']);
  expect(body).toMatchObject({ statusCode, error, requestId: expect.any(String) });
  if (message) expect(body.message).toMatch(message);
}

describe('API key access control', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let submitter: CreatedApiKey;
  let approver: CreatedApiKey;
  let admin: CreatedApiKey;
  const logs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    submitter = await createApiKey(db.prisma, { name: 'sam', role: 'submitter' });
    approver = await createApiKey(db.prisma, { name: 'ana', role: 'approver' });
    admin = await createApiKey(db.prisma, { name: 'root', role: 'admin' });
    app = await buildTestApp(db, { logs });
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  test('keys look like elk_<43 base64url chars>, only their sha256 is stored, with a short prefix', async () => {
    expect(submitter.key).toMatch(/^elk_[A-Za-z0-9_-]{43}$/);
    expect(submitter.prefix).toBe(submitter.key.slice(0, 12));
    const row = await db.prisma.apiKey.findUniqueOrThrow({ where: { id: submitter.id } });
    expect(row.keyHash).toBe(hashApiKey(submitter.key));
    expect(JSON.stringify(row)).not.toContain(submitter.key);
  });

  test('public routes need no key', async () => {
    expect((await request(app, { method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await request(app, { method: 'GET', url: '/docs/json' })).statusCode).toBe(200);
  });

  test('no key: 401 in the service error shape, with WWW-Authenticate', async () => {
    const res = await request(app, { method: 'GET', url: '/v1/things' });
    expectError(res, 401, 'Unauthorized', /missing API key/);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    // Unknown URLs need a key too (no probing), then 404.
    expectError(await request(app, { method: 'GET', url: '/v1/nope' }), 401, 'Unauthorized');
    expectError(
      await request(app, { method: 'GET', url: '/v1/nope', headers: bearer(submitter.key) }),
      404,
      'Not Found',
    );
  });

  test('unknown, malformed or revoked key: 401', async () => {
    const unknown = 'elk_' + 'A'.repeat(43);
    expectError(
      await request(app, { method: 'GET', url: '/v1/things', headers: bearer(unknown) }),
      401,
      'Unauthorized',
      /invalid API key/,
    );
    expectError(
      await request(app, { method: 'GET', url: '/v1/things', headers: bearer('not-a-key') }),
      401,
      'Unauthorized',
      /invalid API key/,
    );
    expectError(
      await request(app, { method: 'GET', url: '/v1/things', headers: { authorization: `Basic ${submitter.key}` } }),
      401,
      'Unauthorized',
      /Bearer/,
    );
    expectError(
      await request(app, {
        method: 'GET',
        url: '/v1/things',
        headers: { ...bearer(submitter.key), 'x-api-key': approver.key },
      }),
      401,
      'Unauthorized',
      /different keys/,
    );

    const doomed = await createApiKey(db.prisma, { name: 'doomed', role: 'admin' });
    expect((await request(app, { method: 'GET', url: '/v1/things', headers: bearer(doomed.key) })).statusCode).toBe(
      200,
    );
    await revokeApiKey(db.prisma, doomed.id);
    expectError(
      await request(app, { method: 'GET', url: '/v1/things', headers: bearer(doomed.key) }),
      401,
      'Unauthorized',
      /invalid API key/,
    );
  });

  test('wrong role: 403, before the body is even validated', async () => {
    const res = await request(app, { method: 'POST', url: '/v1/decide', headers: bearer(submitter.key), payload: {} });
    expectError(res, 403, 'Forbidden', /role submitter; this request needs role approver \(or admin\)/);
    expectError(
      await request(app, { method: 'POST', url: '/v1/things', headers: bearer(approver.key), payload: { bad: 1 } }),
      403,
      'Forbidden',
    );
    // Without a key an invalid body is a 401, not a 400 that reveals the schema.
    expectError(await request(app, { method: 'POST', url: '/v1/things', payload: { bad: 1 } }), 401, 'Unauthorized');
  });

  test('right role: 200, and the handler sees the principal', async () => {
    const read = await request(app, { method: 'GET', url: '/v1/things', headers: bearer(approver.key) });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({ keyId: approver.id, name: 'ana', role: 'approver' });
    const submit = await request(app, {
      method: 'POST',
      url: '/v1/things',
      headers: { 'x-api-key': submitter.key },
      payload: { n: 1 },
    });
    expect(submit.statusCode).toBe(200);
    expect(submit.json()).toEqual({ n: 1, by: 'sam' });
    const decide = await request(app, { method: 'POST', url: '/v1/decide', headers: bearer(approver.key) });
    expect(decide.json()).toEqual({ actor: 'ana' });
    // A route that declares nothing needs admin for writes (fails closed).
    expectError(
      await request(app, { method: 'POST', url: '/v1/unconfigured', headers: bearer(approver.key) }),
      403,
      'Forbidden',
    );
  });

  test('admin is allowed everywhere', async () => {
    for (const [method, url, payload] of [
      ['GET', '/v1/things', undefined],
      ['POST', '/v1/things', { n: 2 }],
      ['POST', '/v1/decide', undefined],
      ['POST', '/v1/unconfigured', undefined],
      ['GET', '/v1/api-keys', undefined],
    ] as const) {
      const res = await request(app, { method, url, headers: bearer(admin.key), ...(payload ? { payload } : {}) });
      expect({ method, url, status: res.statusCode }).toEqual({ method, url, status: 200 });
    }
  });

  test('lastUsedAt is recorded', async () => {
    const row = await db.prisma.apiKey.findUniqueOrThrow({ where: { id: approver.id } });
    expect(row.lastUsedAt).toBeInstanceOf(Date);
    expect(await verifyApiKey(db.prisma, approver.key)).toEqual({ keyId: approver.id, name: 'ana', role: 'approver' });
  });

  test('key management over HTTP: admin only; the key is returned once; revoke takes effect', async () => {
    expectError(
      await request(app, { method: 'GET', url: '/v1/api-keys', headers: bearer(approver.key) }),
      403,
      'Forbidden',
    );
    const created = await request(app, {
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(admin.key),
      payload: { name: 'ci', role: 'submitter' },
    });
    expect(created.statusCode).toBe(201);
    const { key, id } = created.json();
    expect(key).toMatch(/^elk_/);
    const listed = (await request(app, { method: 'GET', url: '/v1/api-keys', headers: bearer(admin.key) })).json();
    const entry = listed.keys.find((k: any) => k.id === id);
    expect(entry).toMatchObject({ name: 'ci', role: 'submitter', revokedAt: null, prefix: key.slice(0, 12) });
    expect(JSON.stringify(listed)).not.toContain(key);
    expect(
      (await request(app, { method: 'POST', url: `/v1/api-keys/${id}/revoke`, headers: bearer(admin.key) })).json()
        .revokedAt,
    ).toEqual(expect.any(String));
    expectError(await request(app, { method: 'GET', url: '/v1/things', headers: bearer(key) }), 401, 'Unauthorized');
    expectError(
      await request(app, {
        method: 'POST',
        url: `/v1/api-keys/${crypto.randomUUID()}/revoke`,
        headers: bearer(admin.key),
      }),
      404,
      'Not Found',
    );
    expectError(
      await request(app, {
        method: 'POST',
        url: '/v1/api-keys',
        headers: bearer(admin.key),
        payload: { name: 'x', role: 'root' },
      }),
      400,
      'Bad Request',
    );
  });

  test('keys never appear in the log output', async () => {
    await request(app, { method: 'GET', url: '/v1/things', headers: bearer(submitter.key) });
    await request(app, { method: 'GET', url: '/v1/things', headers: { 'x-api-key': approver.key } });
    await request(app, { method: 'POST', url: '/v1/decide', headers: bearer(submitter.key) });
    const output = logs.join('');
    expect(output).toContain('"url":"/v1/things"');
    // The headers are logged (our serializer) but redacted.
    expect(output).toContain('"authorization":"[Redacted]"');
    expect(output).toContain('"x-api-key":"[Redacted]"');
    for (const key of [submitter.key, approver.key, admin.key]) {
      expect(output).not.toContain(key);
      expect(output).not.toContain(key.slice(12)); // nor its secret part alone
    }
  });

  test('create / list / revoke functions', async () => {
    const k = await createApiKey(db.prisma, { name: ' ops ', role: 'approver' });
    expect(k.name).toBe('ops');
    await expect(createApiKey(db.prisma, { name: '  ', role: 'approver' })).rejects.toThrow(/name/);
    await expect(createApiKey(db.prisma, { name: 'x', role: 'boss' as never })).rejects.toThrow(/role must be one of/);
    expect((await listApiKeys(db.prisma)).map((x) => x.id)).toContain(k.id);
    const first = await revokeApiKey(db.prisma, k.id);
    expect(first?.revokedAt).toBeInstanceOf(Date);
    const again = await revokeApiKey(db.prisma, k.id);
    expect(again?.revokedAt).toEqual(first?.revokedAt); // idempotent: keeps the first revocation time
    expect(await revokeApiKey(db.prisma, 'not-a-uuid')).toBeNull();
    expect((await listApiKeys(db.prisma, { includeRevoked: false })).map((x) => x.id)).not.toContain(k.id);
    expect(await verifyApiKey(db.prisma, k.key)).toBeNull();
  });
});

describe('rate limiting', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let a: CreatedApiKey;
  let b: CreatedApiKey;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await createApiKey(db.prisma, { name: 'a', role: 'submitter' });
    b = await createApiKey(db.prisma, { name: 'b', role: 'submitter' });
    app = await buildTestApp(db, { max: 2 });
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  test('per key: the third request in the window is a 429 in the error shape; other keys are unaffected', async () => {
    const first = await request(app, { method: 'GET', url: '/v1/things', headers: bearer(a.key) });
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect((await request(app, { method: 'GET', url: '/v1/things', headers: bearer(a.key) })).statusCode).toBe(200);
    const limited = await request(app, { method: 'GET', url: '/v1/things', headers: bearer(a.key) });
    expectError(limited, 429, 'Too Many Requests', /rate limit exceeded: at most 2 requests per 60s/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect((await request(app, { method: 'GET', url: '/v1/things', headers: bearer(b.key) })).statusCode).toBe(200);
  });

  test('without a valid key, per client IP (so key guessing is throttled); public routes are not limited', async () => {
    // Requests with valid keys above did not count against this IP.
    expect((await request(app, { method: 'GET', url: '/v1/things' })).statusCode).toBe(401);
    expect(
      (await request(app, { method: 'GET', url: '/v1/things', headers: bearer('elk_' + 'B'.repeat(43)) })).statusCode,
    ).toBe(401);
    expectError(
      await request(app, { method: 'GET', url: '/v1/things', headers: bearer('elk_' + 'C'.repeat(43)) }),
      429,
      'Too Many Requests',
    );
    for (let i = 0; i < 5; i++) expect((await request(app, { method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    // A valid key still gets through from the same IP.
    expect((await request(app, { method: 'GET', url: '/v1/things', headers: bearer(b.key) })).statusCode).toBe(200);
  });
});

describe('bootstrap admin key and the admin command', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  test('ensureBootstrapAdminKey creates one admin key only when no key exists, even when called concurrently', async () => {
    const results = await Promise.all([
      ensureBootstrapAdminKey(db.prisma),
      ensureBootstrapAdminKey(db.prisma),
      ensureBootstrapAdminKey(db.prisma),
    ]);
    const created = results.filter((r) => r !== null);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ role: 'admin', name: 'bootstrap-admin', key: expect.stringMatching(/^elk_/) });
    expect(await verifyApiKey(db.prisma, created[0]!.key)).toMatchObject({ role: 'admin' });
    expect(await ensureBootstrapAdminKey(db.prisma)).toBeNull();
    // Revoked keys still count: an operator who revoked every key is not handed a new admin key.
    await revokeApiKey(db.prisma, created[0]!.id);
    expect(await ensureBootstrapAdminKey(db.prisma)).toBeNull();
  });

  test('create-key prints the key once; list-keys never shows it; revoke-key revokes', async () => {
    const run = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runAdminCommand(argv, db.prisma, {
        out: (l) => void out.push(l),
        err: (l) => void err.push(l),
      });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const created = await run('create-key', '--name', 'ana', '--role', 'approver');
    expect(created.code).toBe(0);
    const key = /^(elk_\S+)$/m.exec(created.out)?.[1];
    expect(key).toBeDefined();
    const principal = await verifyApiKey(db.prisma, key!);
    expect(principal).toMatchObject({ name: 'ana', role: 'approver' });

    const listed = await run('list-keys');
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(principal!.keyId);
    expect(listed.out).toContain(key!.slice(0, 12));
    expect(listed.out).not.toContain(key!);
    expect(JSON.parse((await run('list-keys', '--json')).out)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'ana' })]),
    );

    expect((await run('revoke-key', '--id', principal!.keyId)).code).toBe(0);
    expect(await verifyApiKey(db.prisma, key!)).toBeNull();
    expect((await run('revoke-key', '--id', crypto.randomUUID())).code).toBe(1);
    expect((await run('create-key', '--name', 'x', '--role', 'boss')).code).toBe(2);
    expect((await run('create-key', '--nmae', 'x')).code).toBe(2);
    expect((await run('frobnicate')).code).toBe(2);
  });
});
