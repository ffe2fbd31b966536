import fs from 'node:fs';
import path from 'node:path';
import { sandboxLimitsStatus } from '../../activities/sandbox/sandbox';
import { DEFAULT_API_POLICY } from '../../api/deps';
import { loadConfig } from '../../config/service-config';
import { cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { sandboxTestEnvironment, sharedTestDir } from '../support/sandbox';

// The escape suite, limits part (docs/threat-model.md, "Limits"): a maker that fork-bombs and hogs memory
// runs beside an honest loop on the same worker. Before limits per sandbox, the bomb took every process
// of the shared sandbox uid and the honest loop's gate failed (`uv_thread_create`, exit 134) with its own
// maker blamed. Now the bomb and the hog stop at their own sandbox's limits, on record, and the honest
// loop passes.

const LIMITS = { SANDBOX_MAX_PROCESSES: '64', SANDBOX_MAX_MEMORY_BYTES: String(256 * 1024 * 1024) };
const ENDED = ['PASSED', 'FAILED', 'AWAITING_DECISION', 'REJECTED', 'CANCELLED'];

let h: LoopHarness;
beforeAll(async () => {
  // The API shows what a worker of this host applies, as service/api-main.ts does.
  const limits = sandboxLimitsStatus(loadConfig({ ...sandboxTestEnvironment(), ...LIMITS }));
  h = await startLoopHarness({
    workerEnv: LIMITS,
    policy: { ...DEFAULT_API_POLICY, sandbox: { mode: 'bwrap', limits } },
  });
});
afterAll(async () => {
  await h?.close();
});

// Three children of 150 MB each (the sandbox has 256 MiB), and `sleep` children every 5 ms until a fork
// fails; held until `go` appears in its directory (or 90 s).
const HOG_AND_BOMB = `
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
const hog = 'const b = Buffer.alloc(150 * 1024 * 1024, 1); setInterval(() => b[0]++, 1000);';
const hogs = [0, 1, 2].map(() => spawn(process.execPath, ['-e', hog], { stdio: 'ignore' }));
const ends = hogs.map((c) => new Promise((r) => c.on('exit', (code, signal) => r(signal || code))));
let spawned = 0, failed = 0;
const bomb = setInterval(() => {
  try { const c = spawn('sleep', ['120'], { stdio: 'ignore' }); c.on('error', () => failed++); if (c.pid) spawned++; }
  catch { failed++; }
}, 5);
setTimeout(() => fs.writeFileSync(path.join(dir, 'running'), ''), 2000);
const deadline = Date.now() + 90000;
setInterval(() => {
  if (!fs.existsSync(path.join(dir, 'go')) && Date.now() < deadline) return;
  clearInterval(bomb);
  fs.writeFileSync(path.join(dir, 'results.json'), JSON.stringify({ spawned, failed }));
  process.exit(0);
}, 100);
`;

async function until(what: string, probe: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nworker output:\n${h.worker.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('/readyz names the limits per sandbox in force', async () => {
  const ready = await h.request('GET', '/readyz');
  expect(ready.status).toBe(200);
  const limits = ready.body.sandbox.limits;
  expect(limits).toMatchObject({ processes: 64, memoryBytes: 256 * 1024 * 1024, tmpBytes: 1024 ** 3 });
  // This host (root, cgroup v1 pids and memory) has cgroups; elsewhere the mechanism is named all the same.
  if (process.getuid?.() === 0 && fs.existsSync('/sys/fs/cgroup/pids/cgroup.procs'))
    expect(limits).toMatchObject({
      mechanism: expect.stringMatching(/^cgroup-v[12]$/),
      perSandbox: { processes: true, memory: true },
    });
});

test('a fork-bombing, memory-hogging maker stops at its own limits; the honest loop beside it passes', async () => {
  const dir = sharedTestDir('escape-limits-');
  const script = path.join(dir, 'hog-and-bomb.js');
  fs.writeFileSync(script, HOG_AND_BOMB);
  const hostileArgv = [process.execPath, script, dir];
  const hostile = await h.submit(
    loopRequest(createFixtureRepo(), hostileArgv, {
      maker: { backend: 'command', argv: hostileArgv, timeoutSeconds: 180 },
    }),
  );
  await until('the hostile maker to be at its limits', () => fs.existsSync(path.join(dir, 'running')));

  // The honest loop, while the bomb holds every process its sandbox may have.
  h.llm.enqueue({ content: cleanLedger });
  const honestMaker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const honest = await h.waitForLoop(await h.submit(loopRequest(createFixtureRepo(), honestMaker.argv)), ENDED);
  expect(fs.existsSync(path.join(dir, 'results.json'))).toBe(false);
  expect(honest.status).toBe('PASSED');
  expect(honest.iterations[0].evidence.map((e: any) => [e.gate, e.status])).toEqual([
    ['tests:base', 'FAILED'],
    ['tests', 'PASSED'],
    ['tests:differential', 'PASSED'],
  ]);

  fs.writeFileSync(path.join(dir, 'go'), '');
  await until('the hostile maker’s report', () => fs.existsSync(path.join(dir, 'results.json')));
  const { spawned, failed } = JSON.parse(fs.readFileSync(path.join(dir, 'results.json'), 'utf8'));
  expect(spawned).toBeLessThan(64);
  expect(failed).toBeGreaterThan(0);
  // Its maker record names both limits it ran into; the loop itself is ended here (its tests would fail).
  const record = async () =>
    h.db.prisma.executionRecord.findFirst({ where: { loopId: hostile, role: 'maker' }, orderBy: { createdAt: 'asc' } });
  for (let i = 0; i < 100 && !(await record()); i++) await new Promise((r) => setTimeout(r, 100));
  const detail = (await record())?.detail ?? '';
  expect(detail).toContain('sandbox process limit (64) reached: a fork failed');
  expect(detail).toContain('sandbox memory limit (256 MiB) reached — OOM kill');
  await h.request('POST', `/v1/loops/${hostile}/cancel`);
  await h.waitForLoop(hostile, ENDED);
}, 300_000);
