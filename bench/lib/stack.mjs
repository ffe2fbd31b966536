// The whole service for one bench, all local: PostgreSQL, the Temporal dev server, the fake model, a
// fixture repository, the API and the workers as separate processes from dist.
import { performance } from 'node:perf_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { apiClient, createKeys } from './api-client.mjs';
import { importDist } from './dist.mjs';
import { startFakeLlm } from './fake-llm.mjs';
import { createPlainFixtureRepo } from './fixture-repo.mjs';
import { startInfrastructure } from './infrastructure.mjs';
import { startApi, startWorker } from './service-processes.mjs';
import { freePort } from './util.mjs';

/** SANDBOX for the service's commands: the service's default (bubblewrap) unless BENCH_SANDBOX says otherwise. */
export const SANDBOX = process.env.BENCH_SANDBOX ?? 'bwrap';

/**
 * The workers' layout (BENCH_WORKERS): `split`, as `npm start` runs them — one worker for loops and their
 * record writes (WORKER_ROLE=workflows), one for the heavy activities (WORKER_ROLE=activities) — or `all`,
 * one worker doing both.
 */
export const WORKERS = process.env.BENCH_WORKERS ?? 'split';
if (!['split', 'all'].includes(WORKERS)) throw new Error(`BENCH_WORKERS must be split or all, not ${WORKERS}`);
export const WORKER_ROLES = WORKERS === 'all' ? ['all'] : ['workflows', 'activities'];

/** The role of the worker that runs loops (workflow tasks, record writes) and of the one that runs makers and gates. */
export const LOOP_ROLE = WORKERS === 'all' ? 'all' : 'workflows';
export const HEAVY_ROLE = WORKERS === 'all' ? 'all' : 'activities';

/**
 * `env`: more settings for every process; `roles`: per worker role, more `env` and the Node options it
 * starts with (`nodeArgs`), e.g. `{ workflows: { env: { WORKER_METRICS_PORT: '9464' }, nodeArgs: [...] } }`.
 */
export async function startStack(name, cleanup, { passAt = 1, env: extraEnv = {}, roles = {} } = {}) {
  const tempDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`)));
  cleanup.add('temp dir', async () => fs.rmSync(tempDir, { recursive: true, force: true }));
  const infra = await startInfrastructure(tempDir, cleanup);
  const llm = await startFakeLlm({ passAt });
  cleanup.add('fake LLM', () => llm.close());
  const repo = createPlainFixtureRepo(fs.mkdirSync(path.join(tempDir, 'fixture'), { recursive: true }));
  const dataDir = path.join(tempDir, 'data');
  fs.mkdirSync(dataDir);

  const env = {
    DATABASE_URL: infra.databaseUrl,
    TEMPORAL_ADDRESS: infra.temporalAddress,
    TEMPORAL_TASK_QUEUE: 'bench',
    DATA_DIR: dataDir,
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: 'bench-key',
    LLM_MODEL: 'bench-reviewer',
    LOG_LEVEL: 'warn',
    SANDBOX,
    // One key submits everything: the rate limit is not what is measured.
    RATE_LIMIT_MAX: '100000000',
    ...extraEnv,
  };
  const { createPrismaClient } = await importDist('prisma/client.js');
  const prisma = createPrismaClient(infra.databaseUrl);
  cleanup.add('database client', () => prisma.$disconnect());
  const connection = await Connection.connect({ address: infra.temporalAddress });
  cleanup.add('Temporal client', () => connection.close());
  const temporal = new Client({ connection });

  const api = await startApi(env, await freePort());
  cleanup.add('API', () => api.stop());
  const stack = {
    tempDir,
    databaseUrl: infra.databaseUrl,
    repo,
    dataDir,
    llm,
    prisma,
    temporal,
    api,
    call: apiClient(api.baseUrl),
    keys: await createKeys(prisma),
    pids: { postgres: infra.postmasterPid, temporal: infra.temporalPid },
    /** The running workers by role (WORKER_ROLES). */
    workers: {},
    /** Starts a worker of a role (another one after a kill); the newest is `stack.workers[role]`. */
    async startWorker(role) {
      const started = await startWorker(
        { ...env, ...roles[role]?.env, WORKER_ROLE: role },
        roles[role]?.nodeArgs ?? [],
      );
      cleanup.add(`${role} worker ${started.pid}`, () => started.stop());
      stack.workers[role] = started;
      return started;
    },
    /** Stops every worker gracefully: from then on loops wait in Temporal's task queues. */
    async stopWorkers() {
      for (const worker of Object.values(stack.workers)) await worker.stop();
    },
    /** What the workers logged that looks like a problem, by role. */
    workerProblems() {
      return Object.fromEntries(Object.entries(stack.workers).map(([role, worker]) => [role, worker.problems()]));
    },
  };
  for (const role of WORKER_ROLES) await stack.startWorker(role);
  return stack;
}

export const TERMINAL = ['PASSED', 'APPROVED', 'REJECTED', 'CANCELLED', 'FAILED'];

/** Submits a loop; its id, or throws with the API's answer. */
export async function submitLoop(stack, body, idempotencyKey) {
  const res = await stack.call(
    'POST',
    '/v1/loops',
    stack.keys.submitter,
    body,
    idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
  );
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`POST /v1/loops answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
  return res.body.id;
}

/**
 * Waits (long poll, no load) for the loop's workflow to end; the loop's row says how it ended, and
 * `endedAt` (performance.now()) when the client learnt it, before the row was read.
 */
export async function waitForLoop(stack, id) {
  await stack.temporal.workflow
    .getHandle(`loop-${id}`)
    .result()
    .catch(() => undefined);
  const endedAt = performance.now();
  const row = await stack.prisma.loop.findUniqueOrThrow({
    where: { id },
    select: { id: true, status: true, phase: true, failureReason: true },
  });
  return { ...row, endedAt };
}
