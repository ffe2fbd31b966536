import { Client, Connection } from '@temporalio/client';
import { buildApp } from '../../api/app';
import { createApiKey } from '../../api/auth/api-keys';
import type { ServiceStatus } from '../../api/service-status';
import { useTestDatabase } from '../support/database';
import { freePort } from '../support/free-port';
import { loopRequest } from '../support/loop-request';
import { outageProxy } from '../support/outage-proxy';

// /healthz during an outage: each dependency is probed within a deadline, so the answer comes (503,
// naming the dependency that did not answer) instead of hanging as long as the client would retry.

const db = useTestDatabase();

test('with Temporal unreachable /healthz answers 503: PostgreSQL ok, Temporal not, with why', async () => {
  const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
  const app = await buildApp({
    prisma: db.prisma,
    temporal: new Client({ connection }),
    taskQueue: 'q',
    logLevel: 'error',
  });
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
    await connection
      .withDeadline(Date.now() + 1500, () => connection.workflowService.getSystemInfo({}))
      .catch(() => undefined);
    await connection.close();
  }
});

test('with both up /healthz is 200', async () => {
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  const app = await buildApp({
    prisma: db.prisma,
    temporal: new Client({ connection }),
    taskQueue: 'q',
    logLevel: 'error',
  });
  try {
    const answer = await fetch(`${await app.listen({ host: '127.0.0.1', port: 0 })}/healthz`);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as any).checks).toEqual({ postgres: { ok: true }, temporal: { ok: true } });
  } finally {
    await app.close();
    await connection.close();
  }
});

test('liveness stays 200 through a Temporal outage; readiness is 503 during it and 200 again soon after it ends', async () => {
  const proxy = await outageProxy(process.env.TEST_TEMPORAL_ADDRESS!);
  // Without the SDK's retry interceptor: its back-off timers outlive a probe's deadline and would fire after
  // this test closed the connection. What is measured — the channel reconnecting — is the same.
  const connection = await Connection.connect({ address: proxy.address, interceptors: [] });
  const app = await buildApp({
    prisma: db.prisma,
    temporal: new Client({ connection }),
    taskQueue: 'q',
    logLevel: 'error',
  });
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    await proxy.down();
    const during = await fetch(`${url}/readyz`);
    expect(during.status).toBe(503);
    expect(((await during.json()) as any).checks.temporal.ok).toBe(false);
    const live = await fetch(`${url}/livez`);
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);

    await proxy.up();
    const back = Date.now();
    let status = 0;
    while (status !== 200 && Date.now() - back < 30_000) status = (await fetch(`${url}/readyz`)).status;
    // How long readiness lags the end of the outage (the gRPC channel's reconnect back-off), for the record.
    console.log(`readiness back ${Date.now() - back} ms after Temporal came back`);
    expect(status).toBe(200);
  } finally {
    await app.close();
    await connection
      .withDeadline(Date.now() + 1500, () => connection.workflowService.getSystemInfo({}))
      .catch(() => undefined);
    await connection.close();
    await proxy.down();
  }
});

test('under npm start /readyz shows the state of the supervised PostgreSQL and dev server; a stopping service is not ready and takes no new loops', async () => {
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  const up = { state: 'up' as const, since: '2030-01-01T00:00:00.000Z', attempts: 0, restarts: 0, lastExit: null };
  let status: ServiceStatus = {
    stopping: false,
    dependencies: {
      postgres: up,
      temporal: { ...up, since: '2030-01-01T00:01:07.000Z', restarts: 1, lastExit: 'signal SIGKILL' },
    },
  };
  const app = await buildApp({
    prisma: db.prisma,
    temporal: new Client({ connection }),
    taskQueue: 'q',
    logLevel: 'error',
    serviceStatus: () => status,
  });
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as any).service).toEqual(status);

    status = { ...status, stopping: true };
    const stopping = await fetch(`${url}/readyz`);
    expect(stopping.status).toBe(503);
    expect(((await stopping.json()) as any).service.stopping).toBe(true);
    const { key } = await createApiKey(db.prisma, { name: 'submitter', role: 'submitter' });
    const refused = await fetch(`${url}/v1/loops`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(loopRequest('/nowhere', ['true'])),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(((await refused.json()) as any).message).toMatch(/^the service is shutting down and takes no new loops/);
    expect(await db.prisma.loop.count()).toBe(0);
  } finally {
    await app.close();
    await connection.close();
  }
});
