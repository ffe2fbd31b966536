import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { FEED_START, nextBatch } from '../../api/loop-event-feed';
import { EventStreams, serveLoopEvents, STREAM_LIMITS } from '../../api/loop-event-stream';
import { LOOP_STATUSES, TERMINAL_STATUSES } from '../../domain/loop-state';
import { moveLoop } from '../../store/progress';
import { listenForLoopWrites, type LoopWrites } from '../../store/loop-writes';
import { insertLoop, useTestDatabase } from '../support/database';

// Commits of a loop's records heard from PostgreSQL (store/loop-writes.ts, the triggers of migrations
// 20261208090000_loop_feed_notify and 20261209090000_loop_feed_ended), and an event stream that sends them
// without waiting for its poll.

const db = useTestDatabase();
let writes: LoopWrites | undefined;
afterEach(async () => {
  await writes?.close();
  writes = undefined;
});

const move = (loopId: string, phase: string, status = 'RUNNING') =>
  moveLoop(db.prisma, {
    loopId,
    status: status as 'RUNNING',
    phase: phase as 'MAKER',
    roundIteration: 1,
    lastVerdict: null,
    failureReason: null,
    key: randomUUID(),
    at: new Date().toISOString(),
    closesEscalations: false,
    ends: status !== 'RUNNING',
    run: null,
  });

async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The listener's own connection, as PostgreSQL lists it (it LISTENs, nothing else does). */
const listenerPids = () =>
  db.prisma.$queryRaw<Array<{ pid: number }>>`
    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN loop_feed'`;

test('a commit that wrote a loop record is heard once, for that loop only; a rolled-back one is not; heard again after the connection broke', async () => {
  const loopId = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'PREPARING' });
  const other = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'PREPARING' });
  writes = listenForLoopWrites(db.url, () => undefined);
  await until('the listener to connect', async () => (await listenerPids()).length === 1);
  let heard = 0;
  writes.subscribe(loopId, () => (heard += 1));
  const unsubscribed = writes.subscribe(other, () => {
    throw new Error('heard after unsubscribing');
  });
  unsubscribed();

  // One transaction writing the loop's row and a LoopEvent row: one notification.
  await move(loopId, 'MAKER');
  await until('the first commit', () => heard === 1);
  await move(other, 'MAKER');
  await db.prisma
    .$transaction(async (tx) => {
      await tx.loop.update({ where: { id: loopId }, data: { phase: 'VERIFY' } });
      throw new Error('rolled back');
    })
    .catch(() => undefined);
  // Notifications come in commit order: once this one is heard, an earlier one would have been too.
  await move(loopId, 'VERIFY');
  await until('the second commit', () => heard >= 2);
  expect(heard).toBe(2);

  const [listener] = await listenerPids();
  await db.prisma.$queryRaw`SELECT pg_terminate_backend(${listener!.pid}::int)`;
  await until('the listener to connect again', async () => {
    const pids = await listenerPids();
    return pids.length === 1 && pids[0]!.pid !== listener!.pid;
  });
  await move(loopId, 'REVIEW');
  await until('a commit after the reconnection', () => heard === 3);
});

test('a commit that writes the loop row with a terminal status is heard as its end; any other is not', async () => {
  writes = listenForLoopWrites(db.url, () => undefined);
  await until('the listener to connect', async () => (await listenerPids()).length === 1);
  const endsHeard = new Map<string, boolean>();
  for (const status of LOOP_STATUSES) {
    const loopId = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'PREPARING' });
    endsHeard.set(status, false);
    writes.subscribe(loopId, (ended) => void (ended && endsHeard.set(status, true)));
    await move(loopId, status === 'RUNNING' ? 'MAKER' : 'DONE', status);
  }
  // Notifications come in commit order: once this last commit is heard, every move before it was too.
  const last = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'PREPARING' });
  let lastHeard = false;
  writes.subscribe(last, () => (lastHeard = true));
  await move(last, 'MAKER');
  await until('the last commit', () => lastHeard);
  expect(Object.fromEntries(endsHeard)).toEqual(
    Object.fromEntries(LOOP_STATUSES.map((status) => [status, TERMINAL_STATUSES.includes(status)])),
  );
});

test("an event stream sends a commit of its loop without waiting for its poll, and ends when the loop's end is committed", async () => {
  const loopId = await listeningLoop();
  const res = new FakeResponse();
  const pollMs = STREAM_LIMITS.pollMs;
  // Longer than the test's own limit: only the commits can move this stream.
  STREAM_LIMITS.pollMs = 10 * 60_000;
  try {
    const { serving } = await serveStream(loopId, res);
    await move(loopId, 'MAKER');
    await until('the MAKER phase on the stream', () => res.text.includes('"title":"MAKER'));
    await move(loopId, 'DONE', 'PASSED');
    await serving;
    expect(res.text).toMatch(/event: end\ndata: \{"loopId":"[^"]+","status":"PASSED","phase":"DONE"\}/);
    expect(res.ended).toBe(true);
  } finally {
    STREAM_LIMITS.pollMs = pollMs;
  }
});

test("a stream waits out a burst of its loop's commits before it reads, and reads the loop's end at once", async () => {
  const loopId = await listeningLoop();
  const res = new FakeResponse();
  const limits = { ...STREAM_LIMITS };
  // Longer than the test's own limit: neither the poll nor the end of a burst can move this stream.
  STREAM_LIMITS.pollMs = 10 * 60_000;
  STREAM_LIMITS.burstMs = 10 * 60_000;
  try {
    // The stream's reads of the database, counted.
    let reads = 0;
    const counted = new Proxy(db.prisma, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== '$queryRaw') return value;
        return (...args: unknown[]) => (reads++, value.apply(target, args));
      },
    });
    const { serving } = await serveStream(loopId, res, counted);
    let heard = 0;
    writes!.subscribe(loopId, () => void heard++);
    const phases = ['MAKER', 'VERIFY', 'REVIEW', 'JUDGE'];
    for (const phase of phases) await move(loopId, phase);
    // Four commits of its loop heard, and a round trip more (a read due at once would have started by
    // then): the stream has not read, it waits for the burst to end.
    await until('the four commits', () => heard >= phases.length);
    await db.prisma.$queryRaw`SELECT 1`;
    expect(reads).toBe(0);
    const beforeEnd = res.writes.length;
    await move(loopId, 'DONE', 'PASSED');
    await serving;
    // The end's commit made it read at once: the burst's moves, each once and in order. Usually in one read;
    // rows written after a transaction still open elsewhere on the server began (the horizon is the
    // cluster's: any test's database) are held back and read again 50 ms later (api/loop-event-feed.ts).
    const read = res.writes
      .slice(beforeEnd)
      .filter((chunk) => chunk.includes('"kind":'))
      .join('');
    expect([...read.matchAll(/"title":"([A-Z]+)/g)].map((m) => m[1])).toEqual([...phases, 'DONE']);
    expect(res.text).toMatch(/event: end\ndata: \{"loopId":"[^"]+","status":"PASSED","phase":"DONE"\}/);
  } finally {
    Object.assign(STREAM_LIMITS, limits);
  }
});

/** A new loop, with the listener connected. */
async function listeningLoop(): Promise<string> {
  const loopId = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'PREPARING' });
  writes = listenForLoopWrites(db.url, () => undefined);
  await until('the listener to connect', async () => (await listenerPids()).length === 1);
  return loopId;
}

/** The loop's event stream into `res`, woken by the listener; resolves once its first batch was written. */
async function serveStream(
  loopId: string,
  res: FakeResponse,
  prisma: typeof db.prisma = db.prisma,
): Promise<{ serving: Promise<void> }> {
  const first = (await nextBatch(db.prisma, loopId, FEED_START))!;
  const serving = serveLoopEvents(
    res as unknown as ServerResponse,
    first,
    {
      prisma,
      loopId,
      log: { warn: () => undefined } as unknown as FastifyBaseLogger,
      onHeartbeat: async () => undefined,
      subscribe: (onWrite) => writes!.subscribe(loopId, onWrite),
    },
    new EventStreams(),
  );
  return { serving };
}

/** What serveLoopEvents uses of a ServerResponse, keeping what was written. */
class FakeResponse extends EventEmitter {
  text = '';
  writes: string[] = [];
  ended = false;
  writeHead(): this {
    return this;
  }
  write(chunk: string): boolean {
    this.text += chunk;
    this.writes.push(chunk);
    return true;
  }
  end(): this {
    this.ended = true;
    return this;
  }
}
