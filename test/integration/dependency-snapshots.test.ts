import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityDeps } from '../../activities/deps';
import { childEnvironment } from '../../activities/process/child-environment';
import { stopLauncher } from '../../activities/process/launcher';
import { runCommand } from '../../activities/process/run-command';
import { snapshotsDir } from '../../activities/sandbox/cache-layout';
import { discardVerificationCheckout } from '../../activities/verification/verification-checkout';
import { handOver } from '../../activities/sandbox/hand-over';
import { probeSandbox } from '../../activities/sandbox/probe';
import { createSandbox } from '../../activities/sandbox/sandbox';
import type { SandboxPolicy } from '../../activities/sandbox/types';
import { setUpCheckout, type CheckoutSetupOutcome } from '../../activities/setup/checkout-setup';
import { setupEnvironment } from '../../activities/setup/setup-environment';
import { loadConfig } from '../../config/service-config';
import { SERVICE_EXCLUDES, type SetupPlan } from '../../domain/setup';
import { createTestDatabase, insertLoop, type TestDatabase } from '../support/database';
import { git } from '../support/test-git';

// Dependency snapshots with real npm, real pip, real bubblewrap and a real database: the first
// verification's set-up installs and keeps its node_modules and venv; the next checkout (same path, same
// lockfile) receives them without installing (under an overlay as root, else a copy), and its evidence says
// so; a passed set-up that is not kept says why. Neither a gate in the checkout nor
// a maker in its workspace can change what the next verification receives; the venv works where it is.

const URL = 'https://example.invalid/acme/snapshots.git';
const PLAN: SetupPlan = {
  commands: [
    {
      argv: ['npm', 'install', '--no-audit', '--no-fund', '--no-package-lock'],
      timeoutSeconds: 300,
      source: 'manifest-inference',
      detail: 'package.json without a lockfile (npm)',
    },
    { argv: ['python3', '-m', 'venv', '.venv'], timeoutSeconds: 120, source: 'manifest-inference', detail: 'venv' },
    {
      argv: ['.venv/bin/python', '-m', 'pip', 'install', '-r', 'requirements.txt'],
      timeoutSeconds: 300,
      source: 'manifest-inference',
      detail: 'requirements.txt (pip install -r)',
    },
  ],
  outputs: ['node_modules/', '.venv/'],
  binDirs: ['.venv/bin'],
  corepack: [],
  notes: [],
};

let db: TestDatabase;
let deps: ActivityDeps;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dependency-snapshots-')));
  const config = loadConfig({ DATA_DIR: dir, SANDBOX: 'bwrap' });
  deps = { prisma: db.prisma, config, sandbox: createSandbox(config) };
  await probeSandbox(deps.sandbox);
});
afterAll(async () => {
  await discardVerificationCheckout(deps, 'loop');
  await stopLauncher();
  await db?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The loop's repository (its workspace), with the service's excludes, as the maker left it. */
function repository(name = 'workspace'): string {
  const repo = path.join(dir, name);
  fs.mkdirSync(repo);
  git(repo, 'init', '-q');
  fs.writeFileSync(path.join(repo, '.git', 'info', 'exclude'), `${SERVICE_EXCLUDES.join('\n')}\n`);
  fs.writeFileSync(
    path.join(repo, 'package.json'),
    JSON.stringify({ name: 'p', dependencies: { 'is-number': '7.0.0' } }),
  );
  fs.writeFileSync(path.join(repo, 'requirements.txt'), 'six==1.16.0\n');
  fs.writeFileSync(path.join(repo, 'test.js'), 'console.log(require("is-number")(1));\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'base');
  return repo;
}

/** A fresh checkout of HEAD at the loop's one verification path (verification-checkout.ts does the same). */
async function freshCheckout(repo: string): Promise<string> {
  const checkout = path.join(dir, 'verification', 'loop');
  // Unmounts the snapshot's overlay, if the last one had it, before removing the tree.
  await discardVerificationCheckout(deps, 'loop');
  fs.mkdirSync(path.dirname(checkout), { recursive: true });
  git(repo, 'worktree', 'add', '--detach', '--force', '--quiet', checkout, 'HEAD');
  await handOver(deps.sandbox, checkout);
  return checkout;
}

async function setUp(loopId: string, sequence: number, checkout: string, repo: string, plan = PLAN) {
  const iteration = await db.prisma.iteration.create({
    data: { loopId, sequence, roundIteration: sequence, contractVersion: 1, startCommit: 'base' },
  });
  const activity = new MockActivityEnvironment({ workflowExecution: { workflowId: `loop-${loopId}`, runId: 'r' } });
  const started = Date.now();
  const outcome: CheckoutSetupOutcome = await activity.run(() =>
    setUpCheckout(deps, {
      loopId,
      iterationId: iteration.id,
      iterationSeq: sequence,
      prefix: 'setup',
      workDir: checkout,
      readOnly: [path.join(repo, '.git')],
      plan,
      repoUrl: URL,
      phase: 'verify',
      restored: [],
    }),
  );
  const rows = await db.prisma.evidence.findMany({
    where: { iterationId: iteration.id },
    orderBy: { gateOrder: 'asc' },
  });
  return { outcome, rows, ms: Date.now() - started };
}

/** A command in the sandbox as a gate of `checkout` runs it, or as a maker of `workDir`. */
async function inSandbox(script: string, policy: Partial<SandboxPolicy> & { workDir: string }) {
  const toolchain = await setupEnvironment(dir, policy.workDir, PLAN, path.join(dir, 'no-caches'));
  const result = await runCommand({
    argv: ['sh', '-c', script],
    cwd: policy.workDir,
    workspaceRoot: policy.workDir,
    timeoutMs: 60_000,
    env: childEnvironment(toolchain.env),
    sandbox: { sandbox: deps.sandbox, policy: { egress: null, ...policy } },
    outputCapBytes: 64 * 1024,
  });
  return { code: result.exitCode, out: `${result.stdout}${result.stderr}` };
}

const IS_NUMBER = 'node_modules/is-number/index.js';
const SIX = '.venv/lib/python3*/site-packages/six.py';

test('a second checkout with the same lockfile gets the first set-up’s snapshot (an overlay as root, else a copy), which no gate or maker can alter', async () => {
  const repo = repository();
  const loopId = await insertLoop(db.prisma, { repoUrl: URL });
  const snapshots = () => fs.readdirSync(snapshotsDir(deps.config.cachesDir, loopId)).filter((n) => !n.startsWith('.'));

  const first = await setUp(loopId, 1, await freshCheckout(repo), repo);
  expect(first.outcome).toEqual({ problem: null });
  expect(first.rows.map((r) => r.status)).toEqual(['PASSED', 'PASSED', 'PASSED']);
  expect(snapshots()).toHaveLength(1);
  const snapshot = path.join(snapshotsDir(deps.config.cachesDir, loopId), snapshots()[0]!);
  const pristine = fs.readFileSync(path.join(snapshot, 'files', IS_NUMBER), 'utf8');

  // A gate of this verification writes in its dependencies as tools do, and may even rewrite them: its copy.
  const checkout = path.join(dir, 'verification', 'loop');
  const gate = { workDir: checkout, readOnly: [path.join(repo, '.git')] };
  const tamper = await inSandbox(
    `echo 'module.exports = () => true;' > ${IS_NUMBER}; for f in ${SIX}; do echo 'x = 1' > "$f"; done; ` +
      'echo built > node_modules/is-number/tsconfig.tmp.tsbuildinfo && cat node_modules/is-number/tsconfig.tmp.tsbuildinfo',
    gate,
  );
  expect(tamper).toEqual({ code: 0, out: 'built\n' });
  // The snapshot is not there to write, for the gate nor for a maker in the loop's workspace.
  for (const policy of [gate, { workDir: repo, readOnlyInWorkDir: ['.git'] }]) {
    const reached = await inSandbox(
      `echo 'module.exports = () => true;' > ${path.join(snapshot, 'files', IS_NUMBER)}`,
      policy,
    );
    expect(reached.code).not.toBe(0);
  }
  expect(fs.readFileSync(path.join(snapshot, 'files', IS_NUMBER), 'utf8')).toBe(pristine);

  const second = await setUp(loopId, 2, await freshCheckout(repo), repo);
  expect(second.outcome).toEqual({ problem: null });
  expect(second.rows.map((r) => [r.gate, r.status, r.exitCode])).toEqual([
    ['setup:1', 'REUSED', null],
    ['setup:2', 'REUSED', null],
    ['setup:3', 'REUSED', null],
  ]);
  // As root the snapshot is mounted under an overlay (constant time); otherwise the checkout gets a copy.
  const attached = process.getuid?.() === 0 ? 'mounted under an overlay' : 'copied';
  expect(second.rows[0]!.stdout).toContain(`reused from snapshot ${path.basename(snapshot)} (${attached}`);
  expect(second.rows[0]!.stdout).toContain(first.rows[0]!.id);

  // What the second verification's gates get: the pristine dependency, and a venv that works at its path.
  const seen = await inSandbox(
    `cat ${IS_NUMBER}; node test.js; python -c 'import six, sys; print(six.__file__, sys.prefix)'; pip --version`,
    gate,
  );
  expect(seen.code).toBe(0);
  expect(seen.out).toContain(pristine);
  expect(seen.out).not.toMatch(/module\.exports = \(\) => true/);
  expect(seen.out).toMatch(/^true$/m);
  // six imported from the venv at the checkout's path, which is the interpreter's prefix there.
  expect(seen.out).toMatch(
    new RegExp(`^${checkout}/\\.venv/lib/python[\\d.]+/site-packages/six\\.py ${checkout}/\\.venv$`, 'm'),
  );
  expect(seen.out).toMatch(/^pip \d+/m);
  process.stdout.write(`set-up: first ${first.ms} ms, reused ${second.ms} ms\n`);

  // A changed lockfile (here: requirements) is a new key: set-up runs again and makes a new snapshot.
  fs.writeFileSync(path.join(repo, 'requirements.txt'), 'six==1.17.0\n');
  git(repo, 'commit', '-qam', 'six 1.17');
  const third = await setUp(loopId, 3, await freshCheckout(repo), repo);
  expect(third.rows.map((r) => r.status)).toEqual(['PASSED', 'PASSED', 'PASSED']);
  expect(snapshots()).toHaveLength(2);
}, 600_000);

test('a passed set-up whose result is not kept says why on its rows', async () => {
  const repo = repository('workspace-not-kept');
  const loopId = await insertLoop(db.prisma, { repoUrl: URL });
  const leaves: SetupPlan = {
    ...PLAN,
    commands: [
      {
        argv: ['sh', '-c', 'mkdir -p node_modules/x && echo built > built.txt'],
        timeoutSeconds: 60,
        source: 'contract',
        detail: 'builds beside installing',
      },
    ],
    outputs: ['node_modules/'],
  };
  const stray = await setUp(loopId, 1, await freshCheckout(repo), repo, leaves);
  expect(stray.rows.map((r) => [r.status, r.sourceDetail])).toEqual([
    ['PASSED', 'builds beside installing; not kept as a dependency snapshot: set-up left built.txt in the checkout'],
  ]);

  // Not keyed at all: a package.json with an install-time script.
  fs.writeFileSync(
    path.join(repo, 'package.json'),
    JSON.stringify({ name: 'p', scripts: { postinstall: 'true' }, dependencies: {} }),
  );
  git(repo, 'commit', '-qam', 'postinstall');
  const scripted: SetupPlan = { ...leaves, commands: [{ ...leaves.commands[0]!, argv: ['true'] }] };
  const unkeyed = await setUp(loopId, 2, await freshCheckout(repo), repo, scripted);
  expect(unkeyed.rows.map((r) => r.sourceDetail)).toEqual([
    'builds beside installing; not kept as a dependency snapshot: package.json runs postinstall at install',
  ]);
  expect(fs.existsSync(snapshotsDir(deps.config.cachesDir, loopId))).toBe(false);
}, 120_000);
