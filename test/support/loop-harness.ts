import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { parseMountinfo, within } from '../../activities/sandbox/mounts';
import { buildApp } from '../../api/app';
import { apiPolicy, type ApiPolicy } from '../../api/deps';
import { loadConfig } from '../../config/service-config';
import { createApiKey } from '../../api/auth/api-keys';
import { listenForLoopWrites } from '../../store/loop-writes';
import { workflowClientInterceptors } from '../../telemetry/tracing';
import { createTestDatabase, type TestDatabase } from './database';
import { adoptGoSeed, leaveGoSeed } from './go-seed';
import { startFakeLlmServer, type FakeLlmServer } from './fake-llm-server';
import { sandboxTestEnvironment } from './sandbox';
import { startWorkerProcess, type WorkerProcess } from './worker-process';

// Everything an end-to-end test talks to: the real HTTP API (listening on a port), the Temporal dev
// server and PostgreSQL started by the global set-up, a worker process, and a fake LLM endpoint.

export interface LoopHarness {
  baseUrl: string;
  db: TestDatabase;
  llm: FakeLlmServer;
  temporal: Client;
  taskQueue: string;
  /** Raw API keys, one per role; the approver's key is named "ana". */
  keys: { admin: string; submitter: string; approver: string };
  worker: WorkerProcess;
  /** The worker's DATA_DIR (workspaces, control files; where the service keeps its bootstrap key). */
  dataDir: string;
  restartWorker(): Promise<void>;
  /** The worker's environment, for a test that starts more workers (another role, say). */
  workerEnv: Record<string, string>;
  /** Sends with the admin key unless `headers.authorization` says otherwise ('' sends no key). */
  request(
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any }>;
  /** Submits a loop with the admin key; its id, or an error naming the status and body when it is not a 201. */
  submit(body: unknown): Promise<string>;
  waitForLoop(id: string, statuses: string[], timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

/**
 * `workerEnv` adds to (or overrides) the worker's configuration, e.g. other model endpoints; `policy` is
 * the operator policy the API enforces (default: the service's defaults; 'worker': the worker's configuration);
 * `database`: a migrated database of the test's own (default: a fresh one on the run's cluster), dropped on close.
 */
export async function startLoopHarness(
  options: { workerEnv?: Record<string, string>; policy?: ApiPolicy | 'worker'; database?: TestDatabase } = {},
): Promise<LoopHarness> {
  const temporalAddress = process.env.TEST_TEMPORAL_ADDRESS;
  if (!temporalAddress) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run through jest (global set-up)');
  const db = options.database ?? (await createTestDatabase());
  const llm = await startFakeLlmServer();
  const taskQueue = `loops-${randomUUID()}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loop-data-'));
  // Go's standard library compiled once a run (go-seed.ts).
  adoptGoSeed(dataDir);
  const workerEnv: Record<string, string> = {
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    DATA_DIR: dataDir,
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: 'test-key',
    LLM_MODEL: 'scripted-reviewer',
    LOG_LEVEL: 'warn',
    // Closing the harness cancels what still runs at once, as a clean-up should (the drain a SIGTERM
    // otherwise allows is tested with the service itself: test/e2e/supervision.e2e.test.ts).
    SHUTDOWN_GRACE_SECONDS: '0',
    ...sandboxTestEnvironment(),
    ...options.workerEnv,
  };
  let worker = await startWorkerProcess(workerEnv);
  const connection = await Connection.connect({ address: temporalAddress });
  // Like the service's client: trace context into the workflows it starts when the test process traces.
  const temporal = new Client({ connection, interceptors: { workflow: workflowClientInterceptors() } });
  // As the service's API process: event streams wake on their loop's commits.
  const loopWrites = listenForLoopWrites(db.url, (line) => console.log(`[harness] ${line}`));
  const app: FastifyInstance = await buildApp({
    prisma: db.prisma,
    temporal,
    taskQueue,
    logLevel: 'warn',
    loopWrites,
    // 'worker': the API reads the worker's configuration, as the service's processes read the same environment.
    policy: options.policy === 'worker' ? apiPolicy(loadConfig(workerEnv)) : options.policy,
  });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const keys = {
    admin: (await createApiKey(db.prisma, { name: 'test-admin', role: 'admin' })).key,
    submitter: (await createApiKey(db.prisma, { name: 'test-submitter', role: 'submitter' })).key,
    approver: (await createApiKey(db.prisma, { name: 'ana', role: 'approver' })).key,
  };

  const request: LoopHarness['request'] = async (method, url, body, headers = {}) => {
    const { authorization = `Bearer ${keys.admin}`, ...rest } = headers;
    const sent: Record<string, string> = authorization ? { authorization, ...rest } : rest;
    const res = await fetch(`${baseUrl}${url}`, {
      method,
      headers: body === undefined ? sent : { 'content-type': 'application/json', ...sent },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  const harness: LoopHarness = {
    baseUrl,
    db,
    llm,
    temporal,
    taskQueue,
    keys,
    dataDir,
    workerEnv,
    get worker() {
      return worker;
    },
    restartWorker: async () => {
      worker = await startWorkerProcess(workerEnv);
    },
    request,
    submit: async (body) => {
      const res = await request('POST', '/v1/loops', body);
      if (res.status !== 201) throw new Error(`POST /v1/loops answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
    waitForLoop: async (id, statuses, timeoutMs = 180_000) => {
      const deadline = Date.now() + timeoutMs;
      let last: any;
      // Every 250 ms the loop's row says its status (about 1 ms of CPU); the whole loop is read through
      // the API (about 20 ms of CPU: its records, and Temporal asked about its run) once the row has
      // reached one of `statuses` or cannot be read, and every 2 s regardless, since that read is what
      // records a run that ended outside the service (api/run-ended-outside.ts). Reading the whole loop
      // every 250 ms cost some 80 ms of CPU a second for each loop a test waited on.
      for (let poll = 0; Date.now() < deadline; poll++) {
        const row = await db.prisma.loop.findUnique({ where: { id }, select: { status: true } }).catch(() => undefined);
        if (poll % 8 === 0 || row === undefined || (row && statuses.includes(row.status))) {
          last = (await request('GET', `/v1/loops/${id}`)).body;
          if (statuses.includes(last?.status)) return last;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      last = (await request('GET', `/v1/loops/${id}`)).body;
      throw new Error(
        `loop ${id} did not reach ${statuses.join('/')}; last state: ${JSON.stringify(last)}\nworker output:\n${worker.output()}`,
      );
    },
    close: async () => {
      await app.close();
      await loopWrites.close();
      await worker.stop();
      await connection.close();
      await llm.close();
      await db.drop();
      leaveGoSeed(dataDir);
      // A worker stopped during a verification leaves its dependency overlays mounted (as root).
      unmountOverlaysUnder(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

function unmountOverlaysUnder(dir: string): void {
  const mounts = parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  for (const { mountPoint } of mounts.filter((m) => within(dir, m.mountPoint)).reverse())
    execFileSync('umount', ['--lazy', '--', mountPoint]);
}
