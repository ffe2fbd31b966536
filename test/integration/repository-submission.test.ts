import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { DEFAULT_API_POLICY } from '../../api/deps';
import { createApiKey, type CreatedApiKey } from '../../api/auth/api-keys';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { loopRequest } from '../support/loop-request';
import { recordingTemporal } from '../support/recording-temporal';

// POST /v1/loops with repository URLs git could misread, and local repositories with the operator's switch
// off: a 400 naming the field, before anything is recorded or started.

describe('repository sources at POST /v1/loops', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let submitter: CreatedApiKey;
  const started: unknown[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    submitter = await createApiKey(db.prisma, { name: 'sam', role: 'submitter' });
    app = await buildApp({
      prisma: db.prisma,
      temporal: recordingTemporal(started),
      taskQueue: 'q',
      logLevel: 'silent',
      policy: { ...DEFAULT_API_POLICY, repositories: { allowLocal: false, connectTimeoutSeconds: 20 } },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  // Real HTTP rather than app.inject (see auth.test.ts: light-my-request cannot load under jest).
  async function submit(repository: {
    url: string;
    baseRef?: string;
  }): Promise<{ status: number; body: { message: string } }> {
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('app is not listening');
    const res = await fetch(`http://127.0.0.1:${address.port}/v1/loops`, {
      method: 'POST',
      headers: { authorization: `Bearer ${submitter.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(loopRequest(repository.url, ['agent'], { repository })),
    });
    return { status: res.status, body: (await res.json()) as { message: string } };
  }

  test.each([
    ['fd::17', /^body\.repository\.url: the "fd::" transport is not allowed/],
    ['ext::sh -c touch% /tmp/pwned', /^body\.repository\.url: the "ext::" transport is not allowed/],
    ['--upload-pack=touch /tmp/pwned', /^body\.repository\.url: must not begin with "-"/],
    ['https://u:p@github.com/acme/app.git', /^body\.repository\.url: credentials must not be embedded in the URL$/],
    ['git://github.com/acme/app.git', /^body\.repository\.url: git:\/\/ is not allowed/],
  ])('%j is a 400 naming body.repository.url', async (url, message) => {
    const res = await submit({ url });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  test('a base ref that looks like an option is a 400 naming body.repository.baseRef', async () => {
    const res = await submit({ url: 'https://github.com/acme/app.git', baseRef: '--orphan' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body\.repository\.baseRef: must not begin with "-"/);
  });

  test.each(['/srv/git/app', './app', 'file:///srv/git/app', 'http://127.0.0.1:8080/app.git'])(
    'local %s is a 400 naming body.repository.url while the operator does not allow local repositories',
    async (url) => {
      const res = await submit({ url });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^body\.repository\.url: the operator does not allow local repositories/);
    },
  );

  test('nothing refused was recorded or started; an https repository is', async () => {
    expect(started).toEqual([]);
    expect(await db.prisma.loop.count()).toBe(0);
    const res = await submit({ url: 'https://github.com/acme/app.git' });
    expect(res.status).toBe(201);
    expect(started).toHaveLength(1);
  });
});
