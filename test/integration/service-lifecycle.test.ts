import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/free-port';
import { processesMatching, waitUntilNoProcessMatching } from '../support/processes';

// `npm start`'s process for real (dist/service/main.js with its embedded PostgreSQL and Temporal dev
// server): SIGTERM stops everything in order and leaves no child; a restart skips current migrations;
// children a SIGKILLed run left behind are named at the next start instead of being attached to.

const MAIN = path.resolve(__dirname, '../../dist/service/main.js');
const dirs: string[] = [];
afterAll(() => {
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
  return { API_PORT: String(await freePort()), TEMPORAL_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()), EMBEDDED_POSTGRES_PORT: String(await freePort()) };
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
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function ready(service: Service): Promise<void> {
  for (;;) {
    if (service.output().includes('Inbox')) return;
    if (service.child.exitCode !== null) throw new Error(`the service exited during start-up:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'service-lifecycle-'));
  fs.chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

test('SIGTERM stops the worker, the API, the dev server and PostgreSQL; the restart finds the schema current', async () => {
  const dir = dataDir();
  const env = await ports();
  const first = start(dir, env);
  await ready(first);
  expect(processesMatching(dir).length).toBeGreaterThanOrEqual(2); // postgres and the dev server
  first.child.kill('SIGTERM');
  const code = await first.exited;
  if (code !== 0) console.log(first.output());
  expect(code).toBe(0);
  expect(first.output()).toContain('shutting down');
  await waitUntilNoProcessMatching(dir);

  const second = start(dir, env);
  await ready(second);
  expect(second.output()).toContain('database schema is current');
  second.child.kill('SIGINT');
  expect(await second.exited).toBe(0);
  await waitUntilNoProcessMatching(dir);
}, 180_000);

test('after a SIGKILL the next start names the port its orphaned PostgreSQL holds instead of attaching to it', async () => {
  const dir = dataDir();
  const env = await ports();
  const crashed = start(dir, env);
  await ready(crashed);
  crashed.child.kill('SIGKILL');
  await crashed.exited;
  expect(processesMatching(dir).length).toBeGreaterThan(0); // what a crash leaves behind

  const next = start(dir, env);
  expect(await next.exited).toBe(1);
  expect(next.output()).toContain(`port ${env.EMBEDDED_POSTGRES_PORT} (EMBEDDED_POSTGRES_PORT) is already in use`);
  expect(next.output()).toContain('earlier run');
}, 180_000);

const asRoot = process.getuid?.() === 0 ? test : test.skip;
asRoot('a data directory PostgreSQL cannot reach is named with what to fix, not a spawn EACCES', async () => {
  const outer = fs.mkdtempSync(path.join(os.tmpdir(), 'service-lifecycle-private-'));
  dirs.push(outer);
  fs.chmodSync(outer, 0o700);
  const service = start(path.join(outer, 'data'), await ports());
  expect(await service.exited).toBe(1);
  expect(service.output()).toContain(`cannot enter ${outer} (mode 700`);
  expect(service.output()).toContain(`chmod o+x ${outer}`);
  expect(service.output()).not.toContain('EACCES');
}, 60_000);
