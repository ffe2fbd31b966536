import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alive, processesMatching, waitUntilNoProcessMatching } from '../support/processes';
import {
  outputUntil,
  servicePorts,
  serviceReady,
  startService,
  startServiceReady,
  type ServiceProcess,
} from '../support/service-process';

// `npm start`'s process for real (dist/service/main.js with its embedded PostgreSQL and Temporal dev
// server, and the API and two workers as its child processes): SIGTERM stops everything in order and
// leaves no child; a worker that dies is restarted; a restart skips current migrations; children a
// SIGKILLed run left behind are named at the next start instead of being attached to.

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

/** The Node processes main runs: `api`, `worker:workflows`, `worker:activities`, by pid. */
function nodeChildren(service: ServiceProcess): Array<{ pid: number; name: string }> {
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
  const { service: first, env } = await startServiceReady(dir);
  expect(processesMatching(dir).length).toBeGreaterThanOrEqual(2); // postgres and the dev server
  const children = nodeChildren(first);
  expect(children.map((c) => c.name).sort()).toEqual(['api', 'worker:activities', 'worker:workflows']);
  expect(new Set(children.map((c) => c.pid)).size).toBe(3);
  expect(first.output()).toMatch(/\[workflows\] worker ready .*: loops and their record writes/);
  // Started with its heap limit (WORKFLOWS_WORKER_HEAP_MB, 512 plus V8's young generation), not Node's
  // default of gigabytes, and the cache that limit holds.
  expect(first.output()).toMatch(/\[workflows\] worker ready .*; workflow cache 200 loops, heap limit 5[0-9]{2} MB/);
  expect(first.output()).toMatch(/\[activities\] worker ready .*: up to \d+ activities at once/);
  first.child.kill('SIGTERM');
  const code = await first.exited;
  if (code !== 0) console.log(first.output());
  expect(code).toBe(0);
  expect(first.output()).toContain('shutting down');
  expect(children.map((c) => c.pid).filter(alive)).toEqual([]);
  await waitUntilNoProcessMatching(dir);

  const second = startService(dir, env);
  await serviceReady(second);
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
  const { service: crashed, env } = await startServiceReady(dir);
  const orphans = nodeChildren(crashed).map((c) => c.pid);
  strays.push(...orphans);
  crashed.child.kill('SIGKILL');
  await crashed.exited;
  expect(processesMatching(dir).length).toBeGreaterThan(0); // what a crash leaves behind
  // The API and the workers notice their parent is gone and stop by themselves.
  for (let i = 0; i < 600 && orphans.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(orphans.filter(alive)).toEqual([]);

  const next = startService(dir, env);
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
    const service = startService(path.join(outer, 'data'), await servicePorts());
    expect(await service.exited).toBe(1);
    expect(service.output()).toContain(`cannot enter ${outer} (mode 700`);
    expect(service.output()).toContain(`chmod o+x ${outer}`);
    expect(service.output()).not.toContain('EACCES');
  },
  60_000,
);
