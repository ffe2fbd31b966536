import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/free-port';
import { alive, processesMatching, waitUntilNoProcessMatching } from '../support/processes';

// `npm start`'s process for real (dist/service/main.js with its embedded PostgreSQL and Temporal dev
// server, and the API and two workers as its child processes): SIGTERM stops everything in order and
// leaves no child; a worker that dies is restarted; a restart skips current migrations; children a
// SIGKILLed run left behind are named at the next start instead of being attached to.

const MAIN = path.resolve(__dirname, '../../dist/service/main.js');
const dirs: string[] = [];
/** Children of a SIGKILLed main (their command lines do not name the data directory). */
const strays: number[] = [];
afterAll(() => {
  for (const pid of strays.filter(alive)) process.kill(pid, 'SIGKILL');
  for (const dir of dirs) {
    for (const pid of processesMatching(dir)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

interface Service {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

async function ports() {
  return {
    API_PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
  };
}

function start(dataDir: string, env: Record<string, string>): Service {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: dataDir,
      ...(process.env.TEMPORAL_CLI_PATH ? { TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Polls the service's output until `seen` holds; fails if the service exits first. */
async function outputUntil(service: Service, seen: (output: string) => boolean): Promise<void> {
  for (;;) {
    if (seen(service.output())) return;
    if (service.child.exitCode !== null) throw new Error(`the service exited:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ready = (service: Service) => outputUntil(service, (output) => output.includes('Inbox'));

/**
 * Starts the service on free ports and waits until it is ready. A port found free can be taken by another
 * suite before the service binds it: that start is retried on other ports, like a restart.
 */
async function startReady(dir: string): Promise<{ service: Service; env: Record<string, string> }> {
  for (let attempt = 1; ; attempt++) {
    const env = await ports();
    const service = start(dir, env);
    try {
      await ready(service);
      return { service, env };
    } catch (err) {
      if (attempt === 3 || !service.output().includes('address already in use')) throw err;
      await service.exited;
      await waitUntilNoProcessMatching(dir);
    }
  }
}

/** The Node processes main runs: `api`, `worker:workflows`, `worker:activities`, by pid. */
function nodeChildren(service: Service): Array<{ pid: number; name: string }> {
  const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(service.child.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n');
  return lines
    .map((line) => ({ pid: Number(line.trim().split(/\s+/)[0]), args: line }))
    .filter(({ args }) => args.includes('dist/service/'))
    .map(({ pid, args }) => ({ pid, name: args.includes('api-main.js') ? 'api' : `worker:${role(pid)}` }));
}

function role(pid: number): string {
  const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return env.find((v) => v.startsWith('WORKER_ROLE='))?.slice('WORKER_ROLE='.length) ?? 'unset';
}

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'service-lifecycle-'));
  fs.chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

// One service started twice (each start from an empty data directory costs initdb, migrations and a dev
// server): the first run ends by SIGTERM, the restart finds the schema current, loses a worker and ends.
test('SIGTERM stops the workers, the API, the dev server and PostgreSQL; the restart finds the schema current; a worker that dies is restarted, and SIGTERM still stops every child', async () => {
  const dir = dataDir();
  const { service: first, env } = await startReady(dir);
  expect(processesMatching(dir).length).toBeGreaterThanOrEqual(2); // postgres and the dev server
  const children = nodeChildren(first);
  expect(children.map((c) => c.name).sort()).toEqual(['api', 'worker:activities', 'worker:workflows']);
  expect(new Set(children.map((c) => c.pid)).size).toBe(3);
  expect(first.output()).toMatch(/\[workflows\] worker ready .*: loops and their record writes/);
  expect(first.output()).toMatch(/\[activities\] worker ready .*: up to \d+ activities at once/);
  first.child.kill('SIGTERM');
  const code = await first.exited;
  if (code !== 0) console.log(first.output());
  expect(code).toBe(0);
  expect(first.output()).toContain('shutting down');
  expect(children.map((c) => c.pid).filter(alive)).toEqual([]);
  await waitUntilNoProcessMatching(dir);

  const second = start(dir, env);
  await ready(second);
  expect(second.output()).toContain('database schema is current');
  const killed = nodeChildren(second).find((c) => c.name === 'worker:activities')!;
  process.kill(killed.pid, 'SIGKILL');
  await outputUntil(second, (output) =>
    output.includes('[engineering-loop] activities exited (code null / signal SIGKILL); restarting in 1s'),
  );
  await outputUntil(second, (output) => output.split('[activities] worker ready').length === 3);
  const restartedChildren = nodeChildren(second);
  const restarted = restartedChildren.find((c) => c.name === 'worker:activities')!;
  expect(restarted.pid).not.toBe(killed.pid);
  expect(restartedChildren.map((c) => c.name).sort()).toEqual(['api', 'worker:activities', 'worker:workflows']);
  expect(second.output()).not.toMatch(/\b(api|workflows) exited/);
  second.child.kill('SIGINT');
  expect(await second.exited).toBe(0);
  expect(restartedChildren.map((c) => c.pid).filter(alive)).toEqual([]);
  await waitUntilNoProcessMatching(dir);
}, 180_000);

test('after a SIGKILL the next start names the port its orphaned PostgreSQL holds instead of attaching to it', async () => {
  const dir = dataDir();
  const { service: crashed, env } = await startReady(dir);
  const orphans = nodeChildren(crashed).map((c) => c.pid);
  strays.push(...orphans);
  crashed.child.kill('SIGKILL');
  await crashed.exited;
  expect(processesMatching(dir).length).toBeGreaterThan(0); // what a crash leaves behind
  // The API and the workers notice their parent is gone and stop by themselves.
  for (let i = 0; i < 600 && orphans.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(orphans.filter(alive)).toEqual([]);

  const next = start(dir, env);
  expect(await next.exited).toBe(1);
  expect(next.output()).toContain(`port ${env.EMBEDDED_POSTGRES_PORT} (EMBEDDED_POSTGRES_PORT) is already in use`);
  expect(next.output()).toContain('earlier run');
}, 180_000);

const asRoot = process.getuid?.() === 0 ? test : test.skip;
asRoot(
  'a data directory PostgreSQL cannot reach is named with what to fix, not a spawn EACCES',
  async () => {
    const outer = fs.mkdtempSync(path.join(os.tmpdir(), 'service-lifecycle-private-'));
    dirs.push(outer);
    fs.chmodSync(outer, 0o700);
    const service = start(path.join(outer, 'data'), await ports());
    expect(await service.exited).toBe(1);
    expect(service.output()).toContain(`cannot enter ${outer} (mode 700`);
    expect(service.output()).toContain(`chmod o+x ${outer}`);
    expect(service.output()).not.toContain('EACCES');
  },
  60_000,
);
