import type { Client } from '@temporalio/client';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { ApiError, registerErrorHandler } from '../../api/errors';
import { sanitiseAnswers, sanitiseLogLine } from '../../api/sanitise-output';
import { registerServiceSecrets } from '../../domain/sanitise';
import type { PrismaClient } from '../../prisma/client';

const SECRET = 'registered-db-password';
const GITHUB_TOKEN = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
registerServiceSecrets([SECRET]);

// Real HTTP rather than app.inject (see test/integration/auth.test.ts: light-my-request cannot load under jest).
async function get(app: FastifyInstance, url: string): Promise<{ status: number; type: string | null; text: string }> {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('app is not listening');
  const res = await fetch(`http://127.0.0.1:${address.port}${url}`);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('API answers', () => {
  let app: FastifyInstance;
  afterEach(() => app.close());

  test('the real app sanitises JSON answers', async () => {
    // /healthz is public and quotes the probes' errors, which may name a database URL.
    const prisma = { $queryRaw: () => Promise.reject(new Error(`connect failed: postgres://loop:${SECRET}@db/x`)) };
    const temporal = {
      workflowService: { getSystemInfo: () => Promise.reject(new Error(`unavailable (token ${GITHUB_TOKEN})`)) },
      connection: { withDeadline: (_deadline: number, call: () => Promise<unknown>) => call() },
    };
    app = await buildApp({
      prisma: prisma as unknown as PrismaClient,
      temporal: temporal as unknown as Client,
      taskQueue: 'q',
      logLevel: 'silent',
    });
    const health = await get(app, '/healthz');
    expect(health.status).toBe(503);
    expect(JSON.parse(health.text)).toEqual({
      status: 'unavailable',
      checks: {
        postgres: { ok: false, error: 'connect failed: postgres://loop:[REDACTED]@db/x' },
        temporal: { ok: false, error: 'unavailable (token [REDACTED])' },
      },
      // Not run by `npm start`: no supervisor's word on the dependencies.
      service: null,
      sandbox: { mode: 'bwrap', confined: true, note: 'makers, agents and gates run under bubblewrap', limits: null },
      // PostgreSQL, which holds the presets' checks, is down.
      agents: null,
    });
  });

  test('plain-text answers and errors are sanitised; other values keep their type', async () => {
    app = Fastify();
    registerErrorHandler(app);
    sanitiseAnswers(app);
    app.get('/fail', () => {
      throw new ApiError(409, `conflicts with ${SECRET}`);
    });
    app.get('/log', (_request, reply) =>
      reply.type('text/plain; charset=utf-8').send(`line 1\nAuthorization: Bearer ${GITHUB_TOKEN}\n${SECRET}\n`),
    );
    app.get('/json', () => ({
      n: 1,
      ok: true,
      none: null,
      list: [`x ${SECRET}`, 2],
      nested: { at: new Date(0), text: 'password=kept-as-written' },
    }));
    const failed = await get(app, '/fail');
    expect(failed.status).toBe(409);
    expect(JSON.parse(failed.text).message).toBe('conflicts with [REDACTED]');
    const log = await get(app, '/log');
    expect(log.type).toBe('text/plain; charset=utf-8');
    expect(log.text).toBe('line 1\nAuthorization: Bearer [REDACTED]\n[REDACTED]\n');
    expect(JSON.parse((await get(app, '/json')).text)).toEqual({
      n: 1,
      ok: true,
      none: null,
      list: ['x [REDACTED]', 2],
      nested: { at: '1970-01-01T00:00:00.000Z', text: 'password=kept-as-written' },
    });
  });
});

describe('log lines', () => {
  test('string values are sanitised, even a token right after a JSON escape', () => {
    const line = `${JSON.stringify({ level: 30, msg: `output:\n${GITHUB_TOKEN}`, req: { url: `/x?token=abcd1234&db=${SECRET}` } })}\n`;
    expect(JSON.parse(sanitiseLogLine(line))).toEqual({
      level: 30,
      msg: 'output:\n[REDACTED]',
      req: { url: '/x?token=[REDACTED]' },
    });
    expect(sanitiseLogLine(line).endsWith('}\n')).toBe(true);
  });

  test('a line that is not JSON is sanitised as text', () => {
    expect(sanitiseLogLine(`plain ${SECRET}\n`)).toBe('plain [REDACTED]\n');
  });

  test('the logger writes what the hook returns', () => {
    const lines: string[] = [];
    const app = Fastify({
      logger: { stream: { write: (line: string) => void lines.push(line) }, hooks: { streamWrite: sanitiseLogLine } },
    });
    app.log.info({ detail: `uses ${SECRET}` }, `token ${GITHUB_TOKEN}`);
    expect(JSON.parse(lines[0]!)).toMatchObject({ detail: 'uses [REDACTED]', msg: 'token [REDACTED]' });
  });
});
