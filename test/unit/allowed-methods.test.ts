import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { hashApiKey } from '../../api/auth/api-keys';
import type { PrismaClient } from '../../prisma/client';

// A known path asked with a method it does not have answers 405 naming the methods it has; an unknown path
// stays 404. The real app (every route group), over real HTTP, with an admin key.

const KEY = `elk_${'b'.repeat(43)}`;
const admin = { id: randomUUID(), name: 'admin', role: 'admin', revokedAt: null, lastUsedAt: new Date() };

let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  const prisma = {
    apiKey: {
      findUnique: ({ where }: { where: { keyHash: string } }) =>
        Promise.resolve(where.keyHash === hashApiKey(KEY) ? admin : null),
    },
  };
  app = await buildApp({
    prisma: prisma as unknown as PrismaClient,
    temporal: {} as unknown as Client,
    taskQueue: 'q',
    logLevel: 'silent',
  });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => app.close());

async function send(method: string, path: string) {
  const res = await fetch(`${baseUrl}${path}`, { method, headers: { authorization: `Bearer ${KEY}` } });
  const text = await res.text();
  return { status: res.status, allow: res.headers.get('allow'), body: text ? (JSON.parse(text) as unknown) : null };
}

const loop = `/v1/loops/${randomUUID()}`;

test.each([
  ['DELETE', '/v1/loops', 'GET, HEAD, POST'],
  ['PUT', loop, 'GET, HEAD'],
  ['PATCH', `${loop}/report`, 'GET, HEAD'],
  ['GET', `${loop}/cancel`, 'POST'],
  ['HEAD', `${loop}/decisions`, 'POST'],
  ['DELETE', `${loop}/evidence/${randomUUID()}/log?stream=stdout`, 'GET, HEAD'],
  ['OPTIONS', '/v1/escalations', 'GET, HEAD'],
  ['POST', '/v1/policy', 'GET, HEAD'],
  ['PUT', '/docs/json', 'GET, HEAD'],
  ['PUT', '/mcp', 'DELETE, GET, HEAD, POST'],
])('%s %s: 405, Allow: %s', async (method, path, allow) => {
  const answer = await send(method, path);
  expect([answer.status, answer.allow]).toEqual([405, allow]);
  if (method !== 'HEAD')
    expect(answer.body).toEqual({
      statusCode: 405,
      error: 'Method Not Allowed',
      message: `${method} is not allowed on ${path.split('?')[0]}; it answers ${allow}`,
      requestId: expect.any(String),
    });
});

test.each([
  ['GET', '/v1/nothing-here'],
  ['DELETE', '/v1/nothing-here'],
  ['GET', `${loop}/nothing-here`],
  ['POST', `${loop}/cancel/again`],
  // A route with the method that finds nothing (swagger-ui's static files): 404, not 405.
  ['GET', '/docs/static/no-such-file'],
])('%s %s: an unknown path stays 404', async (method, path) => {
  const answer = await send(method, path);
  expect([answer.status, answer.allow]).toEqual([404, null]);
  expect(answer.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
});
