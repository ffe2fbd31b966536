import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import YAML from 'yaml';
import { createDatabase, dropDatabase } from '../../service/embedded-postgres';
import { testDatabaseAdminUrl } from '../support/template-database';
import { CORRECT_SUM, createFixtureRepo } from '../support/fixture-repo';
import { cleanLedger, startFakeLlmServer, type FakeLlmServer } from '../support/fake-llm-server';
import { freePort } from '../support/free-port';
import { loopRequest } from '../support/loop-request';
import { processesMatching, waitUntilNoProcessMatching } from '../support/processes';
import { sandboxTestEnvironment, sharedTestDir } from '../support/sandbox';

// The production topology of docker-compose.yml, run as separate real processes from the compiled dist/
// (no Docker engine here): the one-shot `migrate` against a fresh database, the first admin key made the
// way an operator makes it for compose (admin-main create-key), the `api` on a free port, one
// `loop-worker` (WORKER_ROLE=workflows: the loops and their record writes) and three `worker` replicas
// (WORKER_ROLE=activities: makers, gates, reviews, git) on one task queue, the replicas sharing one data
// directory as they share the `worker-data` volume (the api and the loop-worker mount none). Each
// process's command and environment come from docker-compose.yml itself (YAML merge keys,
// `${VAR:-default}` as compose resolves them with VAR unset); the test swaps in only its own addresses, so
// a compose change that breaks the topology fails here. The loop-worker gets what its container has: a
// bwrap that cannot create namespaces (no security_opt) and a DATA_DIR nothing mounts — it must touch
// neither.
//
// Six loops run at once; every maker waits for a release file, so all six are mid-maker (heartbeating
// activities) when one worker is SIGKILLed. The makers it ran die with it; after the heartbeat timeout
// (20 s) Temporal retries them on the surviving replicas, which find the workspace on the shared volume,
// while the loops themselves carry on in the loop-worker.

const ROOT = path.resolve(__dirname, '..', '..');

// --------------------------------------------------------------------------------------------------
// docker-compose.yml and the Dockerfile, read as compose and the image would
// --------------------------------------------------------------------------------------------------

interface ComposeService {
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  volumes?: Array<string | { source?: string; target?: string }>;
  stop_grace_period?: string;
}
const compose = YAML.parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};

function composeService(name: string): ComposeService {
  const s = compose.services[name];
  if (!s) throw new Error(`docker-compose.yml has no service "${name}"`);
  return s;
}

/** `${VAR:-default}` / `${VAR-default}` → default, `${VAR}` → '': compose with VAR unset in the host environment. */
function interpolate(value: string): string {
  return value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-?]([^}]*))?\}/g, (_m, def: string | undefined) => def ?? '');
}

function composeEnvironment(name: string): Record<string, string> {
  const env = composeService(name).environment ?? {};
  const entries: Array<[string, string]> = Array.isArray(env)
    ? env.map((e) => (e.includes('=') ? [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)] : [e, '']))
    : Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]);
  return Object.fromEntries(entries.map(([k, v]) => [k, interpolate(v)]));
}

/** The service's command as argv; the test runs it with this node (the image's `node`). */
function composeCommand(name: string): string[] {
  const command = composeService(name).command;
  const argv = Array.isArray(command) ? command : (command ?? '').split(/\s+/).filter(Boolean);
  expect(argv[0]).toBe('node');
  return [process.execPath, ...argv.slice(1).map((arg) => (arg.startsWith('dist/') ? path.join(ROOT, arg) : arg))];
}

/** `60s`, `1m30s`, `500ms` → ms; compose's default grace period is 10 s. */
function gracePeriodMs(name: string): number {
  const text = composeService(name).stop_grace_period ?? '10s';
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) ms += Number(n) * (units[unit!] ?? 0);
  return ms;
}

/** The runtime stage's `ENV` of the Dockerfile: what every container starts with before compose's environment. */
function imageEnvironment(): Record<string, string> {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const runtime = text.slice(text.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const [, args] of runtime.matchAll(/^ENV\s+(.+)$/gm)) {
    for (const [, k, v] of (args ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g))
      env[k!] = v!.replace(/^"|"$/g, '');
  }
  return env;
}

/**
 * Compose's environment for `name` over the image's, with the test's addresses swapped in. Every swapped
 * key must be one compose sets (a swap never adds configuration); `overrides` are the test's own departures
 * from compose, named where they are made.
 */
function processEnvironment(
  name: string,
  swaps: Record<string, string>,
  overrides: Record<string, string> = {},
): Record<string, string> {
  const fromCompose = composeEnvironment(name);
  for (const key of Object.keys(swaps))
    expect({ service: name, key, inCompose: key in fromCompose }).toEqual({ service: name, key, inCompose: true });
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...imageEnvironment(),
    ...fromCompose,
    ...swaps,
    ...overrides,
  };
}

// --------------------------------------------------------------------------------------------------
// Processes
// --------------------------------------------------------------------------------------------------

interface ServiceProcess {
  name: string;
  pid: number;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  running(): boolean;
  signal(sig: NodeJS.Signals): void;
}

function startProcess(name: string, argv: string[], env: Record<string, string>): ServiceProcess {
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return {
    name,
    pid: child.pid!,
    output: () => output,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    signal: (sig) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    },
  };
}

/** The promise's value, or null when it takes longer than `ms` (the timer does not outlive the wait). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  details = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${details()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function waitForOutput(p: ServiceProcess, text: string, timeoutMs: number): Promise<void> {
  await waitFor(
    `${p.name} to print "${text}"`,
    () => {
      if (!p.running()) throw new Error(`${p.name} exited during start-up:\n${p.output()}`);
      return p.output().includes(text);
    },
    timeoutMs,
    () => p.output(),
  );
}

/** pid → parent pid, for every process on the host (sandboxed makers included: the test runs outside them). */
function parentPids(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // `pid (comm) state ppid …`; comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  return parents;
}

function ancestors(pid: number, parents = parentPids()): number[] {
  const chain: number[] = [];
  for (let p = parents.get(pid); p !== undefined && p > 1 && chain.length < 64; p = parents.get(p)) chain.push(p);
  return chain;
}

function descendants(pid: number, parents = parentPids()): number[] {
  return [...parents.keys()].filter((p) => ancestors(p, parents).includes(pid));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// --------------------------------------------------------------------------------------------------
// A maker that holds until released, so every loop is inside its maker when the worker dies
// --------------------------------------------------------------------------------------------------

const HELD_MAKER = `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const [stateDir, releaseFile] = process.argv.slice(2);
fs.readFileSync(0);
fs.appendFileSync(path.join(stateDir, 'runs.log'), Date.now() + '\\n');
const poll = () => {
  if (!fs.existsSync(releaseFile)) return setTimeout(poll, 100);
  fs.writeFileSync(path.join(process.cwd(), 'src', 'sum.js'), ${JSON.stringify(CORRECT_SUM)});
  console.log('held maker: released, sum fixed');
};
poll();
`;

/** Start times (ms since the epoch) of every run of one loop's maker. */
function makerStarts(stateDir: string): number[] {
  const log = path.join(stateDir, 'runs.log');
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

// --------------------------------------------------------------------------------------------------

const LOOPS = 6;
const WORKERS = 3;

let llm: FakeLlmServer;
let temporal: Connection | undefined;
let client: Client;
let databaseName: string;
let databaseUrl: string;
let workerDataDir: string;
let apiDataDir: string;
/** The loop-worker's container: a DATA_DIR never created, and a bwrap that refuses, as without security_opt. */
let loopWorkerRoot: string;
let loopWorkerDataDir: string;
let refusingBwrapDir: string;
let sharedDir: string;
let taskQueue: string;
let apiKey: string;
let baseUrl: string;
let api: ServiceProcess;
let loopWorker: ServiceProcess;
let workers: ServiceProcess[] = [];
const started: ServiceProcess[] = [];

const request = async (
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${baseUrl}${url}`, {
    method,
    headers: {
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

beforeAll(async () => {
  const temporalAddress = process.env.TEST_TEMPORAL_ADDRESS;
  if (!temporalAddress) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run through jest (global set-up)');
  for (const entry of ['migrate', 'api', 'loop-worker', 'worker']) {
    const file = composeCommand(entry)[1]!;
    if (!fs.existsSync(file))
      throw new Error(
        `${path.relative(ROOT, file)} (docker-compose.yml ${entry}'s command) is not built: run \`npm run build\``,
      );
  }
  llm = await startFakeLlmServer();
  // One clean review per loop, with room for reviews a killed worker asked for and never used.
  llm.enqueue(...Array.from({ length: LOOPS * 3 }, () => ({ content: cleanLedger })));
  temporal = await Connection.connect({ address: temporalAddress });
  client = new Client({ connection: temporal, namespace: composeEnvironment('worker').TEMPORAL_NAMESPACE });
  // An empty database, as compose's postgres creates it: the migrate process is what makes the schema.
  databaseName = `topology_${process.pid}_${randomBytes(4).toString('hex')}`;
  await createDatabase(testDatabaseAdminUrl(), databaseName);
  const url = new URL(testDatabaseAdminUrl());
  url.pathname = `/${databaseName}`;
  databaseUrl = url.toString();
  workerDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'topology-worker-data-'));
  apiDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'topology-api-data-'));
  loopWorkerRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'topology-loop-worker-'));
  loopWorkerDataDir = path.join(loopWorkerRoot, 'data');
  refusingBwrapDir = path.join(loopWorkerRoot, 'bin');
  fs.mkdirSync(refusingBwrapDir);
  fs.writeFileSync(path.join(refusingBwrapDir, 'bwrap'), REFUSING_BWRAP(path.join(loopWorkerRoot, 'bwrap-calls.log')), {
    mode: 0o755,
  });
  sharedDir = sharedTestDir('topology-');
  fs.writeFileSync(path.join(sharedDir, 'held-maker.js'), HELD_MAKER);
  // The queue compose names, made unique to this run (other test files share the Temporal dev server).
  const queues = new Set(['api', 'loop-worker', 'worker'].map((s) => composeEnvironment(s).TEMPORAL_TASK_QUEUE));
  expect(queues.size).toBe(1);
  taskQueue = `${[...queues][0]}-${randomUUID()}`;
});

afterAll(async () => {
  // TOPOLOGY_DEBUG_DIR=/some/dir keeps every process's output there, for a look at a run that passed.
  if (process.env.TOPOLOGY_DEBUG_DIR)
    for (const p of started) fs.writeFileSync(path.join(process.env.TOPOLOGY_DEBUG_DIR, `${p.name}.log`), p.output());
  for (const p of started) p.signal('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  await temporal?.close();
  await llm?.close();
  if (databaseName) await dropDatabase(testDatabaseAdminUrl(), databaseName);
  for (const dir of [workerDataDir, apiDataDir, loopWorkerRoot, sharedDir])
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The addresses compose gives by service name, replaced by the test's. */
function swaps(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_UI_URL: process.env.TEST_TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233',
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: 'test-key',
    ...extra,
  };
}

/**
 * The one policy switch the test turns: compose allows only remote repositories (https:// or ssh; plain
 * http:// only on loopback, which counts as local), and the test's fixture repositories are local paths.
 */
const LOCAL_FIXTURE_REPOSITORIES = { ALLOW_LOCAL_REPOSITORIES: 'true' };

/** bwrap as it fails in a container without the worker's security_opt; it logs every call to `log`. */
const REFUSING_BWRAP = (log: string): string => `#!/bin/sh
echo "$*" >> ${JSON.stringify(log)}
echo 'bwrap: No permissions to create new namespace (a container without security_opt)' >&2
exit 1
`;

/** The compose service a started process runs. */
function composeNameOf(p: ServiceProcess): string {
  if (p === api) return 'api';
  return p === loopWorker ? 'loop-worker' : 'worker';
}

describe('the docker-compose topology as real processes', () => {
  test('migrate (one-shot) brings an empty database to the committed migrations and exits 0, also when run again', async () => {
    const env = processEnvironment('migrate', swaps({ DATA_DIR: apiDataDir }));
    for (const run of ['first', 'again']) {
      const migrate = startProcess(`migrate (${run})`, composeCommand('migrate'), env);
      started.push(migrate);
      const exit = await within(migrate.exited, 90_000);
      expect({
        run,
        exit: exit && { code: exit.code, signal: exit.signal },
        output: exit?.code === 0 ? '' : migrate.output(),
      }).toEqual({
        run,
        exit: { code: 0, signal: null },
        output: '',
      });
      expect(migrate.output()).toContain(
        run === 'first' ? 'migrations applied' : 'database schema is current; nothing to apply',
      );
    }
    const committed = fs
      .readdirSync(path.join(ROOT, 'prisma', 'migrations'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const applied = await db.query<{ migration_name: string }>(
        'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
      );
      expect(applied.rows.map((r) => r.migration_name).sort()).toEqual(committed.sort());
    } finally {
      await db.end();
    }
  }, 200_000);

  test('the first admin key comes from admin-main, run with the api service environment (`docker compose run api node dist/service/admin-main.js`)', async () => {
    const argv = [
      process.execPath,
      path.join(ROOT, 'dist/service/admin-main.js'),
      'create-key',
      '--name',
      'topology-admin',
      '--role',
      'admin',
      '--json',
    ];
    const admin = startProcess('admin-main', argv, processEnvironment('api', swaps({ DATA_DIR: apiDataDir })));
    started.push(admin);
    const exit = await admin.exited;
    expect({ code: exit.code, output: exit.code === 0 ? '' : admin.output() }).toEqual({ code: 0, output: '' });
    const created = JSON.parse(admin.output().trim()) as { key: string; role: string };
    expect(created.role).toBe('admin');
    apiKey = created.key;
  }, 60_000);

  test(`api, 1 loop-worker and ${WORKERS} worker replicas start from the compose environment; the api answers /healthz`, async () => {
    const port = await freePort();
    // The api mounts no volume: its DATA_DIR is its own container's; the replicas share worker-data.
    const apiEnv = processEnvironment(
      'api',
      swaps({ DATA_DIR: apiDataDir, API_HOST: '127.0.0.1', API_PORT: String(port) }),
      LOCAL_FIXTURE_REPOSITORIES,
    );
    const workerVolume = (composeService('worker').volumes ?? []).map((v) =>
      typeof v === 'string' ? v : `${v.source}:${v.target}`,
    );
    expect(workerVolume.some((v) => v.endsWith(`:${composeEnvironment('worker').DATA_DIR}`))).toBe(true);
    expect(composeService('api').volumes ?? []).toEqual([]);
    // Test agents live outside the image's /usr, so the sandbox is told where (as an operator would).
    const workerEnv = processEnvironment('worker', swaps({ DATA_DIR: workerDataDir }), {
      ...LOCAL_FIXTURE_REPOSITORIES,
      ...sandboxTestEnvironment(),
    });
    expect(workerEnv.SANDBOX).toBe('bwrap');
    expect(workerEnv.WORKER_ROLE).toBe('activities');
    // The loop-worker mounts nothing and has no sandbox options: its DATA_DIR does not exist, its bwrap refuses.
    expect(composeService('loop-worker').volumes ?? []).toEqual([]);
    const loopWorkerEnv = processEnvironment('loop-worker', swaps({ DATA_DIR: loopWorkerDataDir }), {
      PATH: `${refusingBwrapDir}:${process.env.PATH ?? ''}`,
    });
    expect(loopWorkerEnv.WORKER_ROLE).toBe('workflows');

    api = startProcess('api', composeCommand('api'), apiEnv);
    loopWorker = startProcess('loop-worker', composeCommand('loop-worker'), loopWorkerEnv);
    workers = Array.from({ length: WORKERS }, (_, i) =>
      startProcess(`worker-${i + 1}`, composeCommand('worker'), workerEnv),
    );
    started.push(api, loopWorker, ...workers);
    baseUrl = `http://127.0.0.1:${port}`;
    await Promise.all([
      ...[loopWorker, ...workers].map((w) => waitForOutput(w, 'worker ready', 110_000)),
      waitFor(
        'the api to listen',
        async () => {
          if (!api.running()) throw new Error(`api exited during start-up:\n${api.output()}`);
          return fetch(`${baseUrl}/healthz`).then(
            (r) => r.status === 200,
            () => false,
          );
        },
        60_000,
        () => api.output(),
      ),
    ]);
    for (const w of workers)
      expect(w.output()).toMatch(
        new RegExp(
          `worker ready on task queue ${taskQueue}: up to \\d+ activities at once \\(sandbox: bubblewrap; limits: [^)]+\\)`,
        ),
      );
    expect(loopWorker.output()).toContain(
      `worker ready on task queue ${taskQueue}: loops and their record writes, no commands`,
    );
    const health = await request('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'ok',
      checks: { postgres: { ok: true }, temporal: { ok: true } },
      sandbox: { mode: 'bwrap' },
    });
    // The one switch the test turns is compose's production policy (LOCAL_FIXTURE_REPOSITORIES).
    expect(composeEnvironment('api').ALLOW_LOCAL_REPOSITORIES).toBe('false');
  }, 150_000);

  test(`${LOOPS} loops through the api: one worker is SIGKILLed mid-maker, its makers run again on the others, every loop passes once`, async () => {
    const releaseFile = path.join(sharedDir, 'release');
    const loops: Array<{ id: string; body: unknown; stateDir: string }> = [];
    for (let i = 0; i < LOOPS; i++) {
      const repo = createFixtureRepo();
      const stateDir = fs.mkdtempSync(path.join(sharedDir, `maker-${i}-`));
      fs.chmodSync(stateDir, 0o777);
      const argv = [process.execPath, path.join(sharedDir, 'held-maker.js'), stateDir, releaseFile];
      const body = loopRequest(repo, argv);
      const submitted = await request('POST', '/v1/loops', body, { 'idempotency-key': `topology-${i}` });
      expect({ i, status: submitted.status, body: submitted.status === 201 ? undefined : submitted.body }).toEqual({
        i,
        status: 201,
        body: undefined,
      });
      loops.push({ id: submitted.body.id, body, stateDir });
    }
    // A client retrying a submission (same Idempotency-Key) gets the same loop, not a second one.
    const again = await request('POST', '/v1/loops', loops[0]!.body, { 'idempotency-key': 'topology-0' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(loops[0]!.id);

    // Every maker running, each inside one of the replicas (its sandbox is a descendant of that worker).
    const workerOf = (stateDir: string): number | undefined => {
      const parents = parentPids();
      for (const pid of processesMatching(stateDir)) {
        const w = workers.findIndex((worker) => ancestors(pid, parents).includes(worker.pid));
        if (w >= 0) return w;
      }
      return undefined;
    };
    const placement = await waitFor(
      `all ${LOOPS} makers to run`,
      () => {
        const where = loops.map((l) => (makerStarts(l.stateDir).length === 1 ? workerOf(l.stateDir) : undefined));
        return where.every((w) => w !== undefined) ? where : undefined;
      },
      100_000,
      () => workers.map((w) => `--- ${w.name}\n${w.output()}`).join('\n'),
    );
    console.log(`makers before the kill: ${placement.map((w, i) => `loop ${i} on worker-${w + 1}`).join(', ')}`);
    // More makers than one replica runs at once (4): the task queue spread them.
    expect(new Set(placement).size).toBeGreaterThan(1);
    // The loops' own worker runs no command (not even the launcher of one).
    expect(descendants(loopWorker.pid)).toEqual([]);

    // SIGKILL the replica running the most makers.
    const counts = workers.map((_, w) => placement.filter((p) => p === w).length);
    const victim = counts.indexOf(Math.max(...counts));
    const killedLoops = loops.filter((_, i) => placement[i] === victim);
    const survivors = workers.filter((_, w) => w !== victim);
    const victimChildren = descendants(workers[victim]!.pid);
    expect(victimChildren.length).toBeGreaterThan(0);
    const killedAt = Date.now();
    workers[victim]!.signal('SIGKILL');
    const killExit = await workers[victim]!.exited;
    expect(killExit.signal).toBe('SIGKILL');
    // Its makers' sandboxes die with it (--die-with-parent): nothing keeps writing the shared workspaces.
    for (const l of killedLoops) await waitUntilNoProcessMatching(l.stateDir);
    await waitFor(
      'every process the killed worker had started to end',
      () => victimChildren.every((pid) => !alive(pid)),
      10_000,
      () => victimChildren.filter(alive).join(', '),
    );
    // The api keeps answering while a replica is gone.
    expect((await request('GET', '/healthz')).status).toBe(200);
    fs.writeFileSync(releaseFile, 'go\n');

    const restarts = await waitFor(
      `the makers of the ${killedLoops.length} loop(s) of the killed worker to run again`,
      () => {
        const second = killedLoops.map((l) => makerStarts(l.stateDir)[1]);
        return second.every((t) => t !== undefined) ? second : undefined;
      },
      90_000,
      () => survivors.map((w) => `--- ${w.name}\n${w.output()}`).join('\n'),
    );
    const recovery = restarts.map((t) => t - killedAt);
    console.log(
      `recovery after SIGKILL of worker-${victim + 1} (heartbeat timeout 20 s): first maker restarted after ${(Math.min(...recovery) / 1000).toFixed(1)} s, ` +
        `last after ${(Math.max(...recovery) / 1000).toFixed(1)} s (${killedLoops.length} loop(s): ${recovery.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')})`,
    );

    const finished = await waitFor(
      'every loop to finish',
      async () => {
        const views = await Promise.all(loops.map((l) => request('GET', `/v1/loops/${l.id}`)));
        return views.every((v) => ['PASSED', 'FAILED', 'AWAITING_DECISION', 'CANCELLED'].includes(v.body?.status))
          ? views.map((v) => v.body)
          : undefined;
      },
      100_000,
      () => survivors.map((w) => `--- ${w.name}\n${w.output()}`).join('\n'),
    );
    expect(finished.map((l: any) => l.status)).toEqual(loops.map(() => 'PASSED'));
    for (const [i, l] of loops.entries()) {
      const killed = killedLoops.includes(l);
      // One iteration each; a killed loop's maker ran twice (the killed attempt, then the retry).
      expect({
        loop: i,
        iterations: finished[i].iterations.map((it: any) => [it.sequence, it.makerAttempts, it.verdict?.verdict]),
      }).toEqual({
        loop: i,
        iterations: [[1, killed ? 2 : 1, 'PASS']],
      });
      expect({ loop: i, runs: makerStarts(l.stateDir).length }).toEqual({ loop: i, runs: killed ? 2 : 1 });
      expect(finished[i].iterations[0].changedFiles).toEqual(['src/sum.js']);
    }

    // The api lists each loop exactly once.
    const listed = await request('GET', '/v1/loops?limit=200');
    expect(listed.status).toBe(200);
    const ids = listed.body.loops.map((l: any) => l.id);
    expect([...ids].sort()).toEqual(loops.map((l) => l.id).sort());

    // Temporal's side: one completed run per loop; who ran which activity and workflow task (identity `<pid>@<host>`).
    const workerName = (identity: string | null | undefined) => {
      if (identity?.startsWith(`${loopWorker.pid}@`)) return 'loop-worker';
      const w = workers.findIndex((worker) => identity?.startsWith(`${worker.pid}@`));
      return w >= 0 ? `worker-${w + 1}` : `unknown (${identity})`;
    };
    const ranWorkflowTasks = new Set<string>();
    const ranAnywhere = new Set<string>();
    for (const [i, l] of loops.entries()) {
      const handle = client.workflow.getHandle(`loop-${l.id}`);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      const history = await handle.fetchHistory();
      const types = new Map<string, string>();
      const ran: string[] = [];
      for (const event of history.events ?? []) {
        if (event.workflowTaskStartedEventAttributes)
          ranWorkflowTasks.add(workerName(event.workflowTaskStartedEventAttributes.identity));
        const scheduled = event.activityTaskScheduledEventAttributes;
        if (scheduled) types.set(String(event.eventId), scheduled.activityType?.name ?? '?');
        const startedAttrs = event.activityTaskStartedEventAttributes;
        if (startedAttrs) {
          const type = types.get(String(startedAttrs.scheduledEventId)) ?? '?';
          const name = workerName(startedAttrs.identity);
          ranAnywhere.add(name);
          ran.push(`${type}${(startedAttrs.attempt ?? 1) > 1 ? ` (attempt ${startedAttrs.attempt})` : ''} → ${name}`);
          if (type === 'runMaker' && killedLoops.includes(l)) {
            expect(startedAttrs.attempt).toBe(2);
            expect(name).not.toBe(`worker-${victim + 1}`);
          }
        }
      }
      console.log(`loop ${i}${killedLoops.includes(l) ? ' (its maker was killed)' : ''}: ${ran.join(', ')}`);
    }
    // The split compose describes: every ordinary activity on the worker replicas, every workflow task
    // (and so every record write, a local activity) on the loop-worker, which the kill never touched.
    expect([...ranAnywhere].every((n) => n.startsWith('worker-'))).toBe(true);
    expect(ranAnywhere.size).toBeGreaterThan(1);
    expect([...ranWorkflowTasks]).toEqual(['loop-worker']);
    expect(loopWorker.running()).toBe(true);
    // It never needed its sandbox or its DATA_DIR.
    expect(fs.existsSync(path.join(loopWorkerRoot, 'bwrap-calls.log'))).toBe(false);
    expect(fs.existsSync(loopWorkerDataDir)).toBe(false);
  }, 240_000);

  test('SIGTERM: the api, the loop-worker and the surviving workers exit 0 within their grace periods and leave no process behind', async () => {
    const health = await request('GET', '/healthz');
    expect(health.status).toBe(200);
    const remaining = [api, loopWorker, ...workers.filter((w) => w.running())];
    const parents = parentPids();
    const children = remaining.flatMap((p) => descendants(p.pid, parents));
    const sentAt = Date.now();
    for (const p of remaining) p.signal('SIGTERM');
    const exits = await Promise.all(
      remaining.map(async (p) => {
        const bound = gracePeriodMs(composeNameOf(p));
        const exit = await within(p.exited, bound);
        return { name: p.name, bound, exit, output: p.output() };
      }),
    );
    for (const e of exits) {
      expect({
        name: e.name,
        code: e.exit?.code,
        signal: e.exit?.signal,
        tail: e.exit?.code === 0 ? '' : e.output.slice(-4000),
      }).toEqual({
        name: e.name,
        code: 0,
        signal: null,
        tail: '',
      });
      console.log(
        `${e.name} exited 0 ${((e.exit!.at - sentAt) / 1000).toFixed(1)} s after SIGTERM (compose grace period ${e.bound / 1000} s)`,
      );
    }
    // Nothing they started outlives them: no child, no process working in the shared data directory.
    expect(children.filter(alive)).toEqual([]);
    expect(processesMatching(workerDataDir)).toEqual([]);
    expect(processesMatching(loopWorkerRoot)).toEqual([]);
    expect(processesMatching(sharedDir)).toEqual([]);
  }, 90_000);
});
