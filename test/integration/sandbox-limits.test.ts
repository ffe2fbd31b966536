import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnvironment } from '../../activities/process/child-environment';
import { runCommand, type CommandResult } from '../../activities/process/run-command';
import { handOver } from '../../activities/sandbox/hand-over';
import { probeSandbox } from '../../activities/sandbox/probe';
import type { Sandbox } from '../../activities/sandbox/types';
import { environmentProblem, gateFailureReason, limitProblem } from '../../activities/verification/gate-outcome';
import { testSandbox } from '../support/sandbox';

// Limits per sandbox against real bubblewrap and the host's real cgroups (docs/threat-model.md, "Limits"):
// what one sandbox does to its limits must not reach another running beside it, memory and processes are
// counted for the sandbox as a whole, its /tmp is bounded, and a limit it hits is named.

const MiB = 1024 * 1024;
const asRoot = process.getuid?.() === 0;
let root: string;

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-limits-')));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function workspace(sandbox: Sandbox, name: string): Promise<string> {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  await handOver(sandbox, dir);
  return dir;
}

function run(sandbox: Sandbox, workDir: string, script: string, timeoutMs = 60_000): Promise<CommandResult> {
  return runCommand({
    argv: [process.execPath, '-e', script],
    cwd: workDir,
    workspaceRoot: workDir,
    timeoutMs,
    env: childEnvironment(),
    sandbox: { sandbox, policy: { workDir, egress: null } },
    outputCapBytes: 64 * 1024,
  });
}

// Node starts a child every 10 ms until one fails, holds what it got for `holdMs`, prints the count.
const forkBomb = (holdMs: number) =>
  `const { spawn } = require('child_process'); let ok = 0, failed = 0;
   const once = () => { try { const c = spawn('sleep', ['60']); c.on('error', () => failed++); if (c.pid) ok++; } catch { failed++; } };
   const timer = setInterval(once, 5);
   setTimeout(() => { clearInterval(timer); console.log('spawned', ok, 'failed', failed); process.exit(0); }, ${holdMs});`;

// Starts `n` short children one after another; prints how many ran.
const spawnsHonestly = (n: number) =>
  `const { spawnSync } = require('child_process'); let ok = 0;
   for (let i = 0; i < ${n}; i++) if (spawnSync('true').status === 0) ok++;
   console.log('ran', ok);`;

describe('processes per sandbox', () => {
  const sandbox = testSandbox('bwrap', { SANDBOX_MAX_PROCESSES: '64' });

  beforeAll(() => probeSandbox(sandbox));

  it('uses a cgroup of its own for each command on this host', () => {
    // This host (root, cgroup v1 pids and memory writable) offers cgroups; other hosts say what they use.
    if (asRoot && fs.existsSync('/sys/fs/cgroup/pids/cgroup.procs'))
      expect(sandbox.limits?.mechanism.kind).toMatch(/^cgroup-v[12]$/);
    expect(sandbox.limits?.values.processes).toBe(64);
  });

  it('a fork bomb in one sandbox does not stop a concurrent one from starting processes', async () => {
    const bombDir = await workspace(sandbox, 'bomb');
    const honestDir = await workspace(sandbox, 'honest');
    const bomb = run(sandbox, bombDir, forkBomb(4000));
    await new Promise((r) => setTimeout(r, 1500));
    const honest = await run(sandbox, honestDir, spawnsHonestly(30));
    const bombed = await bomb;
    expect(bombed.stdout).toMatch(/spawned \d+ failed [1-9]/);
    expect(Number(/spawned (\d+)/.exec(bombed.stdout)?.[1])).toBeLessThan(64);
    expect(bombed.limitsReached).toEqual([
      { limit: 'processes', message: 'sandbox process limit (64) reached: a fork failed' },
    ]);
    expect([honest.exitCode, honest.stdout.trim(), honest.limitsReached]).toEqual([0, 'ran 30', []]);
  }, 60_000);

  it('removes its cgroup when the command ends, leftovers killed', async () => {
    const kind = sandbox.limits?.mechanism.kind;
    if (kind !== 'cgroup-v1' && kind !== 'cgroup-v2') return;
    const mechanism = sandbox.limits!.mechanism as { pidsDir?: string; dir?: string };
    const parent = mechanism.pidsDir ?? mechanism.dir!;
    const mine = () =>
      fs
        .readdirSync(parent)
        .filter((e) => e.startsWith(`loop-sandboxes.${process.pid}.`))
        .flatMap((e) => fs.readdirSync(path.join(parent, e), { withFileTypes: true }))
        .filter((e) => e.isDirectory()).length;
    const dir = await workspace(sandbox, 'cleanup');
    const result = await run(
      sandbox,
      dir,
      `require('child_process').spawn('sleep', ['60'], { detached: true, stdio: 'ignore' }).unref(); console.log('left')`,
    );
    expect(result.stdout).toContain('left');
    expect(mine()).toBe(0);
  });
});

describe('groups a crashed worker left behind', () => {
  it('are emptied and removed by the next worker to start in the same cgroup', async () => {
    const probe = testSandbox('bwrap');
    const mechanism = probe.limits?.mechanism;
    if (mechanism?.kind !== 'cgroup-v1') return;
    // A pid that is gone, and a group named for it holding a live process.
    const dead = spawnSync('true').pid;
    const group = `loop-sandboxes.${dead}.0badc0de`;
    const dirs = [mechanism.pidsDir, mechanism.memoryDir].map((parent) => path.join(parent, group, '7'));
    for (const dir of dirs) fs.mkdirSync(dir, { recursive: true });
    const straggler = spawn('sleep', ['60'], { stdio: 'ignore' });
    for (const dir of dirs) fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(straggler.pid));
    const exited = new Promise((resolve) => straggler.on('exit', (_code, signal) => resolve(signal)));
    testSandbox('bwrap');
    expect(await exited).toBe('SIGKILL');
    for (let i = 0; i < 100 && dirs.some((d) => fs.existsSync(path.dirname(d))); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(dirs.map((d) => fs.existsSync(path.dirname(d)))).toEqual([false, false]);
  });
});

describe('memory per sandbox', () => {
  const sandbox = testSandbox('bwrap', { SANDBOX_MAX_MEMORY_BYTES: String(256 * MiB) });

  it('three children of 150 MB each are limited as a whole: an OOM kill, named', async () => {
    const kind = sandbox.limits?.mechanism.kind;
    if (kind !== 'cgroup-v1' && kind !== 'cgroup-v2') return;
    const dir = await workspace(sandbox, 'memory');
    const child = `const b = Buffer.alloc(150 * 1024 * 1024, 1); setTimeout(() => console.log(b.length), 3000);`;
    const result = await run(
      sandbox,
      dir,
      `const { spawn } = require('child_process'); const ends = [];
       for (let i = 0; i < 3; i++) { const c = spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: 'ignore' });
         ends.push(new Promise((r) => c.on('exit', (code, signal) => r(signal || code)))); }
       Promise.all(ends).then((e) => console.log('children', e.join(',')));`,
    );
    expect(result.stdout).toMatch(/children .*SIGKILL/);
    expect(result.limitsReached).toEqual([
      { limit: 'memory', message: 'sandbox memory limit (256 MiB) reached — OOM kill' },
    ]);
  }, 60_000);
});

describe('/tmp per sandbox', () => {
  const sandbox = testSandbox('bwrap', { SANDBOX_MAX_TMP_BYTES: String(16 * MiB) });

  it('is a tmpfs of the configured size: writing past it fails with ENOSPC, and the limit is named', async () => {
    const dir = await workspace(sandbox, 'tmp');
    const before = os.freemem();
    const result = await run(
      sandbox,
      dir,
      `const fs = require('fs'); const mb = Buffer.alloc(1024 * 1024, 1); let written = 0;
       const size = fs.statfsSync('/tmp'); console.log('size', size.blocks * size.bsize);
       try { for (let i = 0; i < 64; i++) { fs.appendFileSync('/tmp/fill', mb); written += mb.length; } }
       catch (e) { console.log('written', written, e.code); console.error(e.message); process.exit(1); }
       console.log('written', written);`,
    );
    expect(result.stdout).toContain(`size ${16 * MiB}`);
    const [, written, code] = /written (\d+) (\w+)/.exec(result.stdout) ?? [];
    expect(code).toBe('ENOSPC');
    expect(Number(written)).toBeLessThanOrEqual(16 * MiB);
    // The sandbox and its /tmp are gone: what it wrote is not held in the host's memory any more.
    expect(os.freemem()).toBeGreaterThan(before - 64 * MiB);
    expect(result.limitsReached.map((l) => l.limit)).toEqual(['tmp']);
    expect(gateFailureReason('tests', result, null)).toBe(
      'the command ran into a limit of its sandbox: sandbox /tmp limit (16 MiB) reached: the command reported ENOSPC (or the host disk is full)',
    );
  }, 60_000);
});

describe('workspace writes per sandbox', () => {
  const sandbox = testSandbox('bwrap', {
    SANDBOX_MAX_WORKSPACE_BYTES: String(8 * MiB),
    SANDBOX_WORKSPACE_CHECK_SECONDS: '1',
  });

  it('a command that wrote past the limit is reported as an environment problem naming it, even if it exited 0', async () => {
    const dir = await workspace(sandbox, 'grows');
    const result = await run(
      sandbox,
      dir,
      `require('fs').writeFileSync('big.bin', Buffer.alloc(20 * 1024 * 1024, 1)); console.log('wrote')`,
    );
    expect(result.exitCode).toBe(0);
    expect(result.limitsReached).toEqual([
      {
        limit: 'workspace',
        message: expect.stringMatching(
          /^sandbox workspace write limit \(8 MiB\) reached: the writable trees grew by \d+ bytes, measured after it ended$/,
        ),
      },
    ]);
    expect(environmentProblem({ ...result, limit: limitProblem(result) })).toMatch(
      /ran into a limit of its sandbox: sandbox workspace write limit \(8 MiB\) reached/,
    );
  });

  it('a command that goes on writing is killed at the next measurement', async () => {
    const dir = await workspace(sandbox, 'keeps-growing');
    const started = Date.now();
    const result = await run(
      sandbox,
      dir,
      `const fs = require('fs'); fs.writeFileSync('big.bin', Buffer.alloc(20 * 1024 * 1024, 1)); setTimeout(() => console.log('survived'), 30000);`,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.stdout).not.toContain('survived');
    expect(result.signal).toBe('SIGKILL');
    expect(result.limitsReached).toEqual([
      {
        limit: 'workspace',
        message: expect.stringMatching(/reached: the writable trees grew by \d+ bytes, killed while it ran$/),
      },
    ]);
  }, 60_000);
});

(asRoot ? describe : describe.skip)('the uid-range fallback (root, SANDBOX_LIMITS=uid-range)', () => {
  const sandbox = testSandbox('bwrap', {
    SANDBOX_LIMITS: 'uid-range',
    SANDBOX_UID_RANGE: '200100-200103',
    SANDBOX_MAX_PROCESSES: '64',
  });

  it('runs concurrent sandboxes as distinct uids, so a fork bomb in one leaves the other its processes', async () => {
    expect(sandbox.limits?.mechanism).toEqual({ kind: 'uid-range', first: 200100, last: 200103 });
    const bombDir = await workspace(sandbox, 'uid-bomb');
    const honestDir = await workspace(sandbox, 'uid-honest');
    const bomb = run(sandbox, bombDir, `console.log('uid', process.getuid()); ${forkBomb(4000)}`);
    await new Promise((r) => setTimeout(r, 1500));
    const honest = await run(sandbox, honestDir, `console.log('uid', process.getuid()); ${spawnsHonestly(30)}`);
    const bombed = await bomb;
    expect(bombed.stdout).toMatch(/failed [1-9]/);
    expect(honest.stdout).toContain('ran 30');
    const uids = [bombed, honest].map((r) => Number(/uid (\d+)/.exec(r.stdout)?.[1]));
    expect(new Set(uids).size).toBe(2);
    for (const uid of uids) expect(uid).toBeGreaterThanOrEqual(200100);
  }, 60_000);

  it('lets a later sandbox (another uid) change what an earlier one wrote, through the shared group', async () => {
    const dir = await workspace(sandbox, 'uid-shared');
    const first = run(
      sandbox,
      dir,
      `require('fs').mkdirSync('d'); require('fs').writeFileSync('d/f', 'one'); setTimeout(() => {}, 1500)`,
    );
    await new Promise((r) => setTimeout(r, 500));
    // Concurrent, so the second is given the next uid of the range.
    const second = await run(
      sandbox,
      dir,
      `setTimeout(() => { require('fs').writeFileSync('d/f', 'two'); require('fs').writeFileSync('d/g', 'new'); console.log('ok', process.getuid()); }, 300)`,
    );
    expect((await first).exitCode).toBe(0);
    expect(second.stdout).toMatch(/^ok \d+/);
    expect(fs.readFileSync(path.join(dir, 'd/f'), 'utf8')).toBe('two');
  }, 60_000);
});
