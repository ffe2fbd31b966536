import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { buildApp } from '../../api/app';
import { createApiKey } from '../../api/auth/api-keys';
import { activityDatabaseWait } from '../../activities/database-wait';
import type { ActivityDeps } from '../../activities/deps';
import { recordProgress, type ProgressInput } from '../../activities/progress';
import { classedFailure } from '../../activities/retry-classes';
import { createPrismaClient } from '../../prisma/client';
import { describeDatabaseError, isDatabaseUnreachable } from '../../store/database-errors';
import { insertLoop, useTestDatabase } from '../support/database';
import { outageProxy } from '../support/outage-proxy';

// A PostgreSQL outage, played by a TCP proxy in front of the real database that is taken down and
// brought back: inside an activity a query waits for the database (for as long as its attempt lives),
// outside one it fails at once, the failure is said in a sentence, and the API answers 503 with
// Retry-After while it lasts.

const db = useTestDatabase();
let proxy: Awaited<ReturnType<typeof outageProxy>>;
let proxiedUrl: string;

beforeAll(async () => {
  const url = new URL(db.url);
  proxy = await outageProxy(`${url.hostname}:${url.port}`);
  url.host = proxy.address;
  proxiedUrl = url.toString();
});
afterEach(() => proxy.up().catch(() => undefined));
afterAll(() => proxy.down());

/** A worker's client through the proxy, with the lines its database wait logs. */
function workerClient() {
  const log: string[] = [];
  const prisma = createPrismaClient(
    proxiedUrl,
    activityDatabaseWait((line) => log.push(line)),
  );
  return { prisma, log, deps: { prisma } as unknown as ActivityDeps };
}

/** An activity attempt of `loopId`'s run that started now and may last `ms`. */
const attemptOf = (loopId: string, runId: string, ms: number) =>
  new MockActivityEnvironment({
    workflowExecution: { workflowId: `loop-${loopId}`, runId },
    startToCloseTimeoutMs: ms,
    currentAttemptScheduledTimestampMs: Date.now(),
  });

const progress = (loopId: string, move: number): ProgressInput => ({
  loopId,
  status: 'RUNNING',
  phase: 'MAKER',
  roundIteration: 1,
  lastVerdict: null,
  failureReason: null,
  move,
});

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('inside an activity a write waits for the unreachable database and lands once it is back; the worker says when', async () => {
  const worker = workerClient();
  const runId = randomUUID();
  const loopId = await insertLoop(db.prisma, { currentRunId: runId, status: 'RUNNING', phase: 'PREPARING' });
  await proxy.down();

  let settled = false;
  const write = attemptOf(loopId, runId, 120_000)
    .run((input: ProgressInput) => recordProgress(worker.deps, input), progress(loopId, 1))
    .finally(() => (settled = true));
  await until('the worker to say the database cannot be reached', () => worker.log.length > 0);
  expect(worker.log[0]).toMatch(
    /^the database could not be reached \(.+\): activities wait for it and carry on when it is back$/,
  );
  // Had it not waited, the write would have failed with the attempt that logged (and settled before the poll saw the line).
  expect(settled).toBe(false);

  await proxy.up();
  await write;
  expect(await db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } })).toMatchObject({
    status: 'RUNNING',
    phase: 'MAKER',
    move: 1,
  });
  expect(worker.log[1]).toMatch(/^the database is reachable again after \d+ s: waiting activities carry on$/);
  await worker.prisma.$disconnect();
});

test('an attempt stops waiting when it is cancelled or its deadline passes, and fails saying the database could not be reached', async () => {
  const worker = workerClient();
  const runId = randomUUID();
  const loopId = await insertLoop(db.prisma, { currentRunId: runId, status: 'RUNNING', phase: 'PREPARING' });
  await proxy.down();

  const cancelled = attemptOf(loopId, runId, 120_000);
  const write = cancelled.run((input: ProgressInput) => recordProgress(worker.deps, input), progress(loopId, 1));
  await until('the worker to say the database cannot be reached', () => worker.log.length > 0);
  cancelled.cancel();
  const failure = await write.catch((err: unknown) => err);
  expect(isDatabaseUnreachable(failure)).toBe(true);

  // Past its deadline (here 1.5 s after it started) an attempt gives up, and Temporal schedules the next one.
  const timedOut = await attemptOf(loopId, runId, 1_500)
    .run((input: ProgressInput) => recordProgress(worker.deps, input), progress(loopId, 1))
    .catch((err: unknown) => err);
  expect(isDatabaseUnreachable(timedOut)).toBe(true);
  // What the attempt reports to Temporal: a retryable failure in a sentence, whatever the attempt number.
  expect(classedFailure(timedOut, 9, 5)).toMatchObject({
    type: 'DatabaseUnavailable',
    message: 'the database could not be reached',
    nonRetryable: false,
  });
  expect(classedFailure(timedOut, 9, 5)).toBeInstanceOf(ApplicationFailure);
  expect((await db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } })).move).toBe(0);
  await worker.prisma.$disconnect();
});

test("outside an activity a query fails at once; its message, full of the client's internals, becomes a sentence", async () => {
  const worker = workerClient();
  await proxy.down();
  const failure = await worker.prisma.loop.findMany().catch((err: unknown) => err);
  expect(isDatabaseUnreachable(failure)).toBe(true);
  expect((failure as Error).message).toContain('prisma.loop.findMany()');
  expect(describeDatabaseError(failure)).toBe('the database could not be reached');
  expect(worker.log).toEqual([]);
  await worker.prisma.$disconnect();
});

test('while the database is down the API answers 503 with Retry-After, and /readyz says PostgreSQL is down; both recover with it', async () => {
  const { key } = await createApiKey(db.prisma, { name: 'outage', role: 'admin' });
  const prisma = createPrismaClient(proxiedUrl);
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  const app = await buildApp({ prisma, temporal: new Client({ connection }), taskQueue: 'q', logLevel: 'silent' });
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const get = (path: string) => fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect((await get('/v1/loops')).status).toBe(200);

    await proxy.down();
    for (const path of ['/v1/loops', `/v1/loops/${randomUUID()}`]) {
      const during = await get(path);
      expect({ path, status: during.status, retryAfter: during.headers.get('retry-after') }).toEqual({
        path,
        status: 503,
        retryAfter: '5',
      });
      expect(await during.json()).toMatchObject({
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'the database could not be reached; send the request again in a few seconds',
      });
    }
    const ready = await get('/readyz');
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as any).checks).toEqual({
      postgres: { ok: false, error: 'the database could not be reached' },
      temporal: { ok: true },
    });

    await proxy.up();
    expect((await get('/v1/loops')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
  } finally {
    await app.close();
    await connection.close();
    await prisma.$disconnect();
  }
});
