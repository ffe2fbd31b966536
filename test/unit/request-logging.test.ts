import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import type { PrismaClient } from '../../prisma/client';

// The API's log at info holds what needs a person (errors, 5xx answers), not a line per request; LOG_LEVEL=debug
// shows every request again. The real app, over real HTTP, with its log lines read back.

const KEY = `elk_${'a'.repeat(43)}`;

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  res?: { statusCode: number };
  err?: { message: string };
}

async function appLogging(level: string): Promise<{ app: FastifyInstance; lines: LogLine[]; baseUrl: string }> {
  const lines: LogLine[] = [];
  const prisma = {
    // /healthz answers 503 while PostgreSQL is down; a key lookup that throws is an unexpected failure (500).
    $queryRaw: () => Promise.reject(new Error('connect ECONNREFUSED')),
    apiKey: { findUnique: () => Promise.reject(new Error('boom in the key lookup')) },
  };
  const temporal = {
    workflowService: { getSystemInfo: () => Promise.resolve({}) },
    connection: { withDeadline: (_deadline: number, call: () => Promise<unknown>) => call() },
  };
  const app = await buildApp({
    prisma: prisma as unknown as PrismaClient,
    temporal: temporal as unknown as Client,
    taskQueue: 'q',
    logLevel: level,
    logStream: { write: (line) => lines.push(JSON.parse(line) as LogLine) },
  });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, lines, baseUrl };
}

async function call(baseUrl: string, path: string): Promise<{ status: number; requestId?: string }> {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  const body = (await res.json()) as { requestId?: string };
  return { status: res.status, requestId: body.requestId };
}

/** Resolves once `condition` holds, checking after each turn of the event loop (a log line is written asynchronously). */
async function until(condition: () => boolean): Promise<void> {
  for (let turns = 0; !condition(); turns++) {
    if (turns > 10_000) throw new Error('the expected log line was never written');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const WARN = 40;
const ERROR = 50;

describe('request logging', () => {
  let app: FastifyInstance | undefined;
  afterEach(() => app?.close());

  test('at info, a request answered 2xx or 4xx writes no line; a 5xx answer and an error do, with the request id', async () => {
    const logged = await appLogging('info');
    app = logged.app;
    expect((await call(logged.baseUrl, '/livez')).status).toBe(200);
    expect((await call(logged.baseUrl, '/docs/json')).status).toBe(200);
    expect((await fetch(`${logged.baseUrl}/docs/static/no-such-file`)).status).toBe(404);
    const unavailable = await call(logged.baseUrl, '/healthz');
    expect(unavailable.status).toBe(503);
    const failed = await call(logged.baseUrl, '/v1/loops');
    expect(failed.status).toBe(500);
    // The answer's line is written once the response has gone out: wait for the last one.
    await until(() => logged.lines.some((l) => l.reqId === failed.requestId && l.level === WARN));

    const requests = logged.lines.filter((l) => l.reqId);
    expect(requests).toEqual([
      expect.objectContaining({ level: WARN, msg: 'request answered with a server error', res: { statusCode: 503 } }),
      expect.objectContaining({
        level: ERROR,
        msg: 'request failed',
        reqId: failed.requestId,
        err: expect.objectContaining({ message: 'boom in the key lookup' }),
      }),
      expect.objectContaining({ level: WARN, reqId: failed.requestId, res: { statusCode: 500 } }),
    ]);
    expect(requests[0]!.reqId).not.toBe(failed.requestId);
    // Nothing else but the server's start.
    expect(logged.lines.filter((l) => !l.reqId).map((l) => l.msg)).toEqual([
      expect.stringMatching(/^Server listening/),
    ]);
  });

  test('at debug, every request is logged as it comes in and as it is answered', async () => {
    const logged = await appLogging('debug');
    app = logged.app;
    expect((await call(logged.baseUrl, '/livez')).status).toBe(200);
    await until(() => logged.lines.some((l) => l.msg === 'request completed'));
    const lines = logged.lines.filter((l) => l.reqId);
    expect(lines.map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
    expect(new Set(lines.map((l) => l.reqId)).size).toBe(1);
    expect(lines[1]).toMatchObject({ level: 20, res: { statusCode: 200 } });
  });
});
