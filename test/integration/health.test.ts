import { Client, Connection } from '@temporalio/client';
import { buildApp } from '../../api/app';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { freePort } from '../support/free-port';

// /healthz during an outage: each dependency is probed within a deadline, so the answer comes (503,
// naming the dependency that did not answer) instead of hanging as long as the client would retry.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

test('with Temporal unreachable /healthz answers 503: PostgreSQL ok, Temporal not, with why', async () => {
  const connection = await Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
  const app = await buildApp({ prisma: db.prisma, temporal: new Client({ connection }), taskQueue: 'q', logLevel: 'warn' });
  try {
    const answer = await fetch(`${await app.listen({ host: '127.0.0.1', port: 0 })}/healthz`);
    expect(answer.status).toBe(503);
    const body = (await answer.json()) as any;
    expect(body.status).toBe('unavailable');
    expect(body.checks.postgres).toEqual({ ok: true });
    expect(body.checks.temporal.ok).toBe(false);
    expect(body.checks.temporal.error).toEqual(expect.any(String));
  } finally {
    await app.close();
    // The probe's own call ends at its deadline; closing the channel under it would reject it later,
    // inside whichever test file runs next. A call with the same deadline, started after it, ends after it.
    await connection.withDeadline(Date.now() + 1500, () => connection.workflowService.getSystemInfo({})).catch(() => undefined);
    await connection.close();
  }
});

test('with both up /healthz is 200', async () => {
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  const app = await buildApp({ prisma: db.prisma, temporal: new Client({ connection }), taskQueue: 'q', logLevel: 'warn' });
  try {
    const answer = await fetch(`${await app.listen({ host: '127.0.0.1', port: 0 })}/healthz`);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as any).checks).toEqual({ postgres: { ok: true }, temporal: { ok: true } });
  } finally {
    await app.close();
    await connection.close();
  }
});
