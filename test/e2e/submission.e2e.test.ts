import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { TEMPORAL_DEADLINE_MS } from '../../api/temporal-calls';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { cleanLedger } from '../support/fake-llm-server';
import { freePort } from '../support/free-port';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// Submissions that cannot be lost: while Temporal cannot be reached a submission is a prompt 503 that
// leaves no loop behind, and the same request once Temporal is back starts the loop exactly once. A loop
// Temporal never started gets a clear 409 on cancel and decide. Strings PostgreSQL refuses are a 400.

let h: LoopHarness;
/** A second API on the same database whose Temporal client points at a closed port: Temporal is down. */
let outage: { app: FastifyInstance; client: Client; baseUrl: string };
beforeAll(async () => {
  h = await startLoopHarness();
  const client = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }) });
  const app = await buildApp({ prisma: h.db.prisma, temporal: client, taskQueue: h.taskQueue, logLevel: 'silent' });
  outage = { app, client, baseUrl: await app.listen({ host: '127.0.0.1', port: 0 }) };
});
afterAll(async () => {
  await outage?.app.close();
  await outage?.client.connection.close();
  await h?.close();
});

async function send(baseUrl: string, method: string, url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${h.keys.admin}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

test('during a Temporal outage a submission is a prompt 503 leaving no loop; the same request afterwards starts it once', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const body = loopRequest(repo, maker.argv);
  const key = { 'idempotency-key': `outage-${randomUUID()}` };

  for (const headers of [key, {}]) {
    const started = Date.now();
    const refused = await send(outage.baseUrl, 'POST', '/v1/loops', body, headers);
    // Bounded by the API's Temporal deadline, not left to gRPC's retries: a bound, not a speed figure, so
    // it leaves room for a loaded CI machine (9.6 s was seen there once against a 5 s deadline).
    expect(Date.now() - started).toBeLessThan(TEMPORAL_DEADLINE_MS * 3);
    expect(refused).toMatchObject({
      status: 503,
      retryAfter: '10',
      body: {
        error: 'Service Unavailable',
        message: expect.stringMatching(
          /^Temporal is unavailable: the loop was not started; send the same request again/,
        ),
      },
    });
  }
  expect(await h.db.prisma.loop.count()).toBe(0);

  h.llm.enqueue({ content: cleanLedger });
  const created = await send(h.baseUrl, 'POST', '/v1/loops', body, key);
  expect(created.status).toBe(201);
  const again = await send(h.baseUrl, 'POST', '/v1/loops', body, key);
  expect([again.status, again.body.id]).toEqual([200, created.body.id]);
  expect((await h.waitForLoop(created.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION'])).status).toBe('PASSED');
  expect(await h.db.prisma.loop.count()).toBe(1);
  expect(await h.temporal.workflow.count(`TaskQueue = "${h.taskQueue}"`)).toMatchObject({ count: 1 });
});

test('cancel and decide on a loop Temporal never started answer 409 saying so; while Temporal is down, 503', async () => {
  // A row whose workflow start was lost (as an earlier version could leave behind).
  const id = randomUUID();
  await h.db.prisma.loop.create({
    data: {
      id,
      workflowId: `loop-${id}`,
      requestHash: 'x',
      status: 'QUEUED',
      phase: 'QUEUED',
      repoUrl: '/srv/repo',
      baseRef: 'main',
      maxIterations: 1,
      input: {},
    },
  });

  const cancel = await send(h.baseUrl, 'POST', `/v1/loops/${id}/cancel`, {});
  expect(cancel).toMatchObject({
    status: 409,
    body: { message: `loop ${id} has no workflow in Temporal (it was never started); there is nothing to cancel` },
  });
  const decide = await send(h.baseUrl, 'POST', `/v1/loops/${id}/decisions`, {
    kind: 'approve',
    escalationId: randomUUID(),
  });
  expect(decide).toMatchObject({
    status: 409,
    body: { message: `loop ${id} has not started yet; there is nothing to decide` },
  });

  const unreachable = await send(outage.baseUrl, 'POST', `/v1/loops/${id}/cancel`, {});
  expect(unreachable).toMatchObject({
    status: 503,
    retryAfter: '10',
    body: { message: 'Temporal is unavailable: the loop was not cancelled; send the cancellation again' },
  });
});

test('NUL and unpaired surrogates are a 400 naming the field, in a loop request and in an API-key name', async () => {
  const before = await h.db.prisma.loop.count();
  const base = loopRequest('/srv/repo', ['node', 'maker.js']);
  const cases: Array<[string, unknown, string]> = [
    [
      '/v1/loops',
      { ...base, contract: { ...base.contract, objective: 'Make sum()\u0000 add' } },
      'body.contract.objective: contains a NUL character (\\u0000) at position 10',
    ],
    [
      '/v1/loops',
      {
        ...base,
        contract: {
          ...base.contract,
          acceptanceCriteria: [
            base.contract.acceptanceCriteria[0],
            { ...base.contract.acceptanceCriteria[1]!, statement: 'passes\u0000' },
          ],
        },
      },
      'body.contract.acceptanceCriteria.1.statement: contains a NUL character',
    ],
    [
      '/v1/loops',
      { ...base, contract: { ...base.contract, constraints: ['no \ud800 here'] } },
      'body.contract.constraints.0: contains an unpaired surrogate (\\ud800)',
    ],
    [
      '/v1/api-keys',
      { name: 'ci\u0000bot', role: 'submitter' },
      'body.name: contains a NUL character (\\u0000) at position 2',
    ],
  ];
  for (const [url, body, message] of cases) {
    const res = await send(h.baseUrl, 'POST', url, body);
    expect([res.status, res.body.message]).toEqual([400, expect.stringContaining(message)]);
  }
  expect(await h.db.prisma.loop.count()).toBe(before);
  expect(await h.db.prisma.apiKey.count({ where: { name: { startsWith: 'ci' } } })).toBe(0);
});
