import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, createPrismaClient } from '../../prisma/client';
import { useTestDatabase } from '../support/database';

// The service's connection pool keeps its idle connections past pg's 10 s idle timeout (a loop after a
// quiet spell must not open new backends with cold caches), yet they never keep a process alive.

const db = useTestDatabase();
let child: ChildProcess | null = null;
afterEach(() => {
  jest.useRealTimers();
  // A child that did not exit (the test timed out) goes with the test.
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = null;
});

/** The PostgreSQL backend a query ran on, before and after the pool sat idle for `idleMs` (fake timers). */
async function backendsAcrossIdle(prisma: PrismaClient, idleMs: number): Promise<[number, number]> {
  const backend = async () => (await prisma.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
  // Faked from before the pool's first connection, whose idle timer is set on its release; sockets,
  // promises and immediates run as they do.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  const before = await backend();
  jest.advanceTimersByTime(idleMs);
  const after = await backend();
  jest.useRealTimers();
  return [before, after];
}

test('an idle connection outlives pg’s idle timeout, so the next query reuses its backend', async () => {
  const prisma = createPrismaClient(db.url);
  try {
    const [before, after] = await backendsAcrossIdle(prisma, 60_000);
    expect(after).toBe(before);
  } finally {
    await prisma.$disconnect();
  }
});

test('with pg’s defaults the same idle spell closes the connection (what the settings prevent)', async () => {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url }) });
  try {
    const [before, after] = await backendsAcrossIdle(prisma, 60_000);
    expect(after).not.toBe(before);
  } finally {
    await prisma.$disconnect();
  }
});

test('a process whose only handles are idle pooled connections exits on its own', async () => {
  // The compiled client (npm test builds first), in a process that queries and never disconnects.
  const client = path.resolve(__dirname, '../../dist/prisma/client.js');
  const script = `
    const { createPrismaClient } = require(${JSON.stringify(client)});
    const prisma = createPrismaClient(process.env.DATABASE_URL);
    Promise.all([1, 2, 3].map(() => prisma.$queryRaw\`SELECT 1 AS one FROM pg_sleep(0.05)\`)).then(() => console.log('queried'));
  `;
  const spawned = spawn(process.execPath, ['-e', script], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: db.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = spawned;
  let output = '';
  spawned.stdout.on('data', (c: Buffer) => (output += c.toString()));
  spawned.stderr.on('data', (c: Buffer) => (output += c.toString()));
  // Without allowExitOnIdle the kept connections would hold it open for ever (the test's timeout).
  const code = await new Promise<number | null>((resolve) => spawned.once('exit', resolve));
  expect({ code, output: output.trim() }).toEqual({ code: 0, output: 'queried' });
});
