import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cleanLedger, startFakeLlmServer, type FakeLlmServer } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo } from '../support/fixture-repo';
import { loopRequest } from '../support/loop-request';
import { alive, gone, processesMatching, waitUntilNoProcessMatching } from '../support/processes';
import { sandboxTestEnvironment, sharedTestDir } from '../support/sandbox';
import {
  outputUntil,
  serviceReady,
  startService,
  startServiceReady,
  type ServiceProcess,
} from '../support/service-process';

// `npm start` (dist/service/main.js) under faults, as real processes: the embedded Temporal dev server and
// PostgreSQL are SIGKILLed under a loop in its maker, and come back (kept down a while by the test, which
// holds their port, so /readyz is seen restarting); the loop passes. SIGTERM with a loop in its maker lets
// the maker finish (the test releases it) and exits 0; after the restart the loop passes with the maker run
// once. SIGTERM with PostgreSQL dead still stops everything, in time, with exit 0. One data directory and
// two starts of the service serve all of it.

const HELD_MAKER = `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const [stateDir, releaseFile] = process.argv.slice(2);
fs.readFileSync(0);
fs.appendFileSync(path.join(stateDir, 'runs.log'), Date.now() + '\\n');
const poll = () => {
  if (!fs.existsSync(releaseFile)) return setTimeout(poll, 100);
  fs.writeFileSync(path.join(process.cwd(), 'src', 'sum.js'), ${JSON.stringify(CORRECT_SUM)});
};
poll();
`;

let llm: FakeLlmServer;
let sharedDir: string;
let dataDir: string;
let env: Record<string, string>;
let service: ServiceProcess;
let apiKey: string;
const services: ServiceProcess[] = [];
const heldPorts: net.Server[] = [];

beforeAll(async () => {
  llm = await startFakeLlmServer();
  llm.enqueue(...Array.from({ length: 6 }, () => ({ content: cleanLedger })));
  sharedDir = sharedTestDir('supervision-');
  fs.writeFileSync(path.join(sharedDir, 'held-maker.js'), HELD_MAKER);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'supervision-'));
  fs.chmodSync(dataDir, 0o755);
  const started = await startServiceReady(dataDir, {
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: 'test-key',
    LLM_MODEL: 'scripted-reviewer',
    LOG_LEVEL: 'warn',
    // Long enough for the test to see the drain and release the maker; never reached.
    SHUTDOWN_GRACE_SECONDS: '600',
    ...sandboxTestEnvironment(),
  });
  service = started.service;
  env = started.env;
  services.push(service);
  apiKey = fs.readFileSync(path.join(dataDir, 'bootstrap-admin-key'), 'utf8').trim();
}, 180_000);

afterAll(async () => {
  for (const port of heldPorts) port.close();
  for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  for (const pid of processesMatching(dataDir)) process.kill(pid, 'SIGKILL');
  await llm?.close();
  if (process.env.SUPERVISION_DEBUG_DIR)
    fs.writeFileSync(
      path.join(process.env.SUPERVISION_DEBUG_DIR, 'service.log'),
      services.map((s) => s.output()).join('\n'),
    );
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(sharedDir, { recursive: true, force: true });
});

async function request(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${env.API_PORT}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
  const deadline = Date.now() + 150_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${service.output().slice(-8000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A loop whose maker holds until its release file exists; resolves once the maker runs. */
async function heldLoop(name: string): Promise<{ id: string; stateDir: string; release: () => void }> {
  const stateDir = fs.mkdtempSync(path.join(sharedDir, `${name}-`));
  fs.chmodSync(stateDir, 0o777);
  const releaseFile = path.join(sharedDir, `${name}.release`);
  const argv = [process.execPath, path.join(sharedDir, 'held-maker.js'), stateDir, releaseFile];
  const submitted = await request('POST', '/v1/loops', loopRequest(createFixtureRepo(), argv));
  expect(submitted.status).toBe(201);
  await until(`${name}'s maker to run`, () => makerStarts(stateDir) === 1);
  return { id: submitted.body.id, stateDir, release: () => fs.writeFileSync(releaseFile, 'go\n') };
}

function makerStarts(stateDir: string): number {
  const log = path.join(stateDir, 'runs.log');
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
}

const readiness = async () => {
  const res = await fetch(`http://127.0.0.1:${env.API_PORT}/readyz`);
  return { status: res.status, body: (await res.json()) as any };
};

/**
 * SIGKILLs the process whose command line holds `marker`, then takes its port so its restarts fail until
 * the returned function gives the port back. The supervisor waits 1 s before its first attempt; should the
 * test be slower than that (a loaded machine), it kills the restarted one and tries again.
 */
async function killAndHoldPort(marker: string, port: string): Promise<() => Promise<void>> {
  for (let attempt = 1; ; attempt++) {
    const [pid, ...others] = processesMatching(marker);
    expect({ marker, found: pid !== undefined, others }).toEqual({ marker, found: true, others: [] });
    process.kill(pid!, 'SIGKILL');
    expect(await gone(pid!)).toBe(true);
    // Holding the port refuses connections (a held one would keep the clients' connections, and its close, waiting).
    const held = net.createServer((socket) => socket.destroy());
    const taken = await new Promise<boolean>((resolve) => {
      held.once('error', () => resolve(false));
      held.listen(Number(port), '127.0.0.1', () => resolve(true));
    });
    if (taken) {
      heldPorts.push(held);
      return () => new Promise<void>((resolve) => held.close(() => resolve()));
    }
    if (attempt === 3) throw new Error(`the port ${port} was taken again before the test could hold it`);
    await until(`the restarted ${marker}`, () => processesMatching(marker).length === 1);
  }
}

/** Kills a dependency under the running service and checks what the log and /readyz say until it is back. */
async function outage(key: 'temporal' | 'postgres', name: string, marker: string, port: string): Promise<void> {
  const release = await killAndHoldPort(marker, port);
  await outputUntil(service, (o) => o.includes(`[engineering-loop] ${name} exited unexpectedly (signal SIGKILL)`));
  await outputUntil(service, (o) => o.includes(`[engineering-loop] ${name} did not start again (attempt 1): `));
  const down = await readiness();
  expect(down.status).toBe(503);
  expect(down.body.service.dependencies[key]).toMatchObject({
    state: 'restarting',
    restarts: 0,
    lastExit: 'signal SIGKILL',
  });
  expect(down.body.service.dependencies[key].attempts).toBeGreaterThanOrEqual(1);
  await release();
  const released = Date.now();
  await outputUntil(service, (o) => o.includes(`[engineering-loop] ${name} is running again`));
  const running = Date.now();
  const back = await until(`/readyz to be 200 after ${name} came back`, async () => {
    const r = await readiness();
    return r.status === 200 && r;
  });
  console.log(
    `${name}: running again ${((running - released) / 1000).toFixed(1)} s after its port was free, /readyz 200 ${((Date.now() - running) / 1000).toFixed(1)} s later`,
  );
  expect(back.body.service.dependencies[key]).toMatchObject({ state: 'up', attempts: 0, restarts: 1 });
}

test('the dev server and PostgreSQL SIGKILLed under a loop in its maker: each is restarted on its data and port, /readyz shows it, the loop passes', async () => {
  const loop = await heldLoop('outages');
  const ready = await readiness();
  expect(ready.status).toBe(200);
  expect(ready.body.service).toMatchObject({
    stopping: false,
    dependencies: { postgres: { state: 'up', restarts: 0 }, temporal: { state: 'up', restarts: 0 } },
  });

  await outage('temporal', 'Temporal dev server', `${dataDir}/temporal/temporal.sqlite`, env.TEMPORAL_PORT!);
  await outage('postgres', 'PostgreSQL', `-D ${dataDir}/postgres`, env.EMBEDDED_POSTGRES_PORT!);
  // The API and workers stayed up: their clients reconnected by themselves.
  expect(service.output()).not.toMatch(/\[engineering-loop\] (api|workflows|activities) exited/);

  loop.release();
  const passed = await until('the loop to end', async () => {
    const view = await request('GET', `/v1/loops/${loop.id}`);
    return ['PASSED', 'FAILED', 'AWAITING_DECISION', 'CANCELLED'].includes(view.body.status) && view.body;
  });
  expect(passed.status).toBe('PASSED');
}, 300_000);

test('SIGTERM with a loop in its maker: new loops are refused, the maker finishes, the service exits 0; after the restart the loop passes, its maker run once', async () => {
  const loop = await heldLoop('drain');
  service.child.kill('SIGTERM');
  await outputUntil(service, (o) =>
    o.includes(
      '[activities] SIGTERM: draining; 1 running activity (makers, gates, reviews) may finish for up to 600 s',
    ),
  );
  // Draining: the maker still runs, the API answers but takes no new loop.
  const stopping = await readiness();
  expect([stopping.status, stopping.body.service.stopping]).toEqual([503, true]);
  const refused = await request('POST', '/v1/loops', loopRequest(createFixtureRepo(), ['true']));
  expect(refused.status).toBe(503);
  expect(processesMatching(loop.stateDir).length).toBeGreaterThan(0);
  expect(service.child.exitCode).toBeNull();

  loop.release();
  expect(await service.exited).toBe(0);
  expect(service.output()).toContain('[engineering-loop] stopped');
  expect(service.output()).not.toMatch(/did not stop within|killing what is left|second signal:/);
  await waitUntilNoProcessMatching(dataDir);

  service = startService(dataDir, env);
  services.push(service);
  await serviceReady(service);
  const passed = await until('the drained loop to end', async () => {
    const view = await request('GET', `/v1/loops/${loop.id}`);
    return ['PASSED', 'FAILED', 'AWAITING_DECISION', 'CANCELLED'].includes(view.body.status) && view.body;
  });
  expect(passed.status).toBe('PASSED');
  expect(makerStarts(loop.stateDir)).toBe(1);
  expect(passed.iterations.map((i: any) => [i.sequence, i.makerAttempts, i.maker?.outcome])).toEqual([
    [1, 1, 'EXIT_0'],
  ]);
}, 300_000);

test('SIGTERM with PostgreSQL dead (its restarts failing) stops everything with exit 0, leaving no process', async () => {
  const children = processesMatching(dataDir);
  await killAndHoldPort(`-D ${dataDir}/postgres`, env.EMBEDDED_POSTGRES_PORT!);
  await outputUntil(service, (o) => o.includes('[engineering-loop] PostgreSQL did not start again (attempt 1)'));
  service.child.kill('SIGTERM');
  expect(await service.exited).toBe(0);
  expect(service.output()).not.toMatch(/killing what is left|did not stop within/);
  expect(children.filter(alive)).toEqual([]);
  await waitUntilNoProcessMatching(dataDir);
}, 120_000);
