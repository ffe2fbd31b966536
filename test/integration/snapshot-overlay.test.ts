import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ActivityDeps } from '../../activities/deps';
import { stopLauncher } from '../../activities/process/launcher';
import { runCommand } from '../../activities/process/run-command';
import { handOver } from '../../activities/sandbox/hand-over';
import { currentMounts, within } from '../../activities/sandbox/mounts';
import type { SandboxPolicy } from '../../activities/sandbox/types';
import { attachSnapshot, layersDirOf, takeSnapshot, type Snapshot } from '../../activities/setup/dependency-snapshots';
import {
  discardVerificationCheckout,
  freshVerificationCheckout,
} from '../../activities/verification/verification-checkout';
import { createSandbox } from '../../activities/sandbox/sandbox';
import { loadConfig } from '../../config/service-config';
import { SERVICE_EXCLUDES, type SetupPlan } from '../../domain/setup';
import { git } from '../support/test-git';

// A dependency snapshot given to a verification checkout as a kernel overlay (root only: the service
// cannot mount otherwise, and copies instead), with real mounts, real git and real bubblewrap, for the
// sandbox's two ways of running commands: as the one sandbox uid, and as a uid per command sharing a group.
// A gate reads its dependencies and writes in them as tools do; nothing it writes reaches the snapshot; no
// sandbox sees the snapshot or the upper layer; every path that removes a checkout unmounts it first.

const asRoot = process.getuid?.() === 0;
const PLAN: SetupPlan = {
  commands: [{ argv: ['true'], timeoutSeconds: 60, source: 'manifest-inference', detail: 'npm' }],
  outputs: ['node_modules/'],
  binDirs: [],
  corepack: [],
  notes: [],
};
const loopId = '7d1c2a52-54a0-4c1e-9a49-3f5b2a1e9c11';

afterAll(() => stopLauncher());

const modes: [string, Record<string, string>][] = [
  ['the sandbox uid', {}],
  ['a uid per command (uid-range)', { SANDBOX_LIMITS: 'uid-range', SANDBOX_UID_RANGE: '200110-200113' }],
];

(asRoot ? describe.each(modes) : describe.skip.each(modes))('commands run as %s', (_name, env) => {
  let dataDir: string;
  let deps: ActivityDeps;
  let repo: string;
  let commit: string;

  beforeAll(() => {
    dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-overlay-')));
    const config = loadConfig({ DATA_DIR: dataDir, SANDBOX: 'bwrap', ...env });
    deps = { config, sandbox: createSandbox(config) } as unknown as ActivityDeps;
    repo = path.join(dataDir, 'workspaces', loopId);
    fs.mkdirSync(repo, { recursive: true });
    git(repo, 'init', '-q');
    fs.writeFileSync(path.join(repo, '.git', 'info', 'exclude'), `${SERVICE_EXCLUDES.join('\n')}\n`);
    fs.writeFileSync(path.join(repo, 'package.json'), '{"name":"p"}\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'base');
    commit = git(repo, 'rev-parse', 'HEAD').trim();
  });
  afterAll(async () => {
    await discardVerificationCheckout(deps, loopId);
    expect(await overlaysUnder(dataDir)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The overlays mounted under `dir`, as the kernel lists them. */
  const overlaysUnder = async (dir: string) =>
    (await currentMounts()).filter((m) => m.fsType === 'overlay' && within(dir, m.mountPoint));

  /** A snapshot made as set-up's would be: installed in a checkout (owned as set-up leaves it), then kept. */
  async function snapshotOf(key: string, content: string): Promise<Snapshot> {
    const checkout = path.join(dataDir, 'setup', key);
    git(repo, 'worktree', 'add', '--detach', '--force', '--quiet', checkout, commit);
    fs.mkdirSync(path.join(checkout, 'node_modules', 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(checkout, 'node_modules', 'pkg', 'index.js'), content);
    await handOver(deps.sandbox, checkout);
    const kept = await takeSnapshot(deps, {
      loopId,
      checkout,
      plan: PLAN,
      key,
      iterationSeq: 1,
      evidenceIds: ['e'],
      restored: [],
    });
    if (typeof kept === 'string') throw new Error(kept);
    return kept;
  }

  async function inSandbox(script: string, policy: SandboxPolicy) {
    const result = await runCommand({
      argv: ['sh', '-c', script],
      cwd: policy.workDir,
      workspaceRoot: policy.workDir,
      timeoutMs: 60_000,
      env: { PATH: '/usr/bin:/bin' },
      sandbox: { sandbox: deps.sandbox, policy },
      outputCapBytes: 64 * 1024,
    });
    return { code: result.exitCode, out: `${result.stdout}${result.stderr}` };
  }

  test('a gate reads and writes its overlaid dependencies; the snapshot stays as set-up made it, unseen by any sandbox', async () => {
    const snapshot = await snapshotOf('key-a', 'pristine\n');
    const lower = path.join(snapshot.dir, 'files', 'node_modules');
    const checkout = await freshVerificationCheckout(deps, loopId, repo, commit);
    expect(await attachSnapshot(checkout, snapshot)).toBe('overlay');
    expect((await overlaysUnder(checkout)).map((m) => [m.mountPoint, m.superOptions.lowerdir])).toEqual([
      [path.join(checkout, 'node_modules'), lower],
    ]);
    const upper = (await overlaysUnder(checkout))[0]!.superOptions.upperdir!;
    expect(within(layersDirOf(checkout), upper)).toBe(true);

    // As vitest's type check does: a changed file and a new one inside a package; and a package added.
    const gate: SandboxPolicy = { workDir: checkout, readOnly: [path.join(repo, '.git')], egress: null };
    const wrote = await inSandbox(
      'cat node_modules/pkg/index.js && echo changed > node_modules/pkg/index.js && ' +
        'mkdir node_modules/pkg/dist && echo built > node_modules/pkg/dist/tsconfig.tsbuildinfo && ' +
        'mkdir node_modules/added && echo new > node_modules/added/index.js && ' +
        'cat node_modules/pkg/index.js node_modules/pkg/dist/tsconfig.tsbuildinfo node_modules/added/index.js && ' +
        'id -u && stat -c %u node_modules/pkg/index.js',
      gate,
    );
    expect(wrote.code).toBe(0);
    const [, , , , uid, owner] = wrote.out.trim().split('\n');
    expect(wrote.out).toMatch(/^pristine\nchanged\nbuilt\nnew\n/);
    // Under uid-range the gate is not the files' owner: it writes through the group.
    if (env.SANDBOX_LIMITS) expect(uid).not.toBe(owner);

    // Neither the gate nor a maker in the loop's workspace can see the snapshot or the upper layer.
    const maker: SandboxPolicy = { workDir: repo, readOnlyInWorkDir: ['.git'], egress: null };
    for (const policy of [gate, maker]) {
      const seen = await inSandbox(
        `for p in ${snapshot.dir} ${lower} ${layersDirOf(checkout)} ${upper}; do [ -e "$p" ] && echo "sees $p"; done; true`,
        policy,
      );
      expect(seen).toEqual({ code: 0, out: '' });
    }
    expect(fs.readFileSync(path.join(lower, 'pkg', 'index.js'), 'utf8')).toBe('pristine\n');
    expect(fs.readdirSync(lower).sort()).toEqual(['pkg']);
    expect(fs.readdirSync(path.join(lower, 'pkg'))).toEqual(['index.js']);

    // A retried verification makes its checkout afresh: the old overlay is unmounted, not deleted through,
    // and the snapshot is attached again as set-up made it.
    const again = await freshVerificationCheckout(deps, loopId, repo, commit);
    expect(await overlaysUnder(dataDir)).toEqual([]);
    expect(fs.existsSync(layersDirOf(again))).toBe(false);
    expect(await attachSnapshot(again, snapshot)).toBe('overlay');
    const seen = await inSandbox('cat node_modules/pkg/index.js; ls node_modules', { ...gate, workDir: again });
    expect(seen).toEqual({ code: 0, out: 'pristine\npkg\n' });

    await discardVerificationCheckout(deps, loopId);
    expect(await overlaysUnder(dataDir)).toEqual([]);
    expect(fs.existsSync(again)).toBe(false);
    expect(fs.existsSync(layersDirOf(again))).toBe(false);
    expect(fs.readFileSync(path.join(lower, 'pkg', 'index.js'), 'utf8')).toBe('pristine\n');
  }, 120_000);

  test('a snapshot a live overlay reads from is not pruned; once unmounted it is', async () => {
    const old = await snapshotOf('key-old', 'old\n');
    const checkout = await freshVerificationCheckout(deps, loopId, repo, commit);
    expect(await attachSnapshot(checkout, old)).toBe('overlay');
    // A loop keeps two snapshots: two newer keys would prune the old one, but an overlay has it as its lower.
    await snapshotOf('key-b', 'b\n');
    await snapshotOf('key-c', 'c\n');
    expect(fs.existsSync(path.join(old.dir, 'meta.json'))).toBe(true);
    expect(fs.readFileSync(path.join(checkout, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('old\n');

    await discardVerificationCheckout(deps, loopId);
    await snapshotOf('key-d', 'd\n');
    expect(fs.existsSync(old.dir)).toBe(false);
  }, 120_000);

  test('an overlay left mounted by a worker that is gone is found and unmounted before its checkout is removed', async () => {
    const snapshot = await snapshotOf('key-e', 'e\n');
    const checkout = await freshVerificationCheckout(deps, loopId, repo, commit);
    // What a crashed worker leaves: a mount no running process knows of, only the kernel.
    const layer = path.join(layersDirOf(checkout), 'left');
    fs.mkdirSync(path.join(layer, 'upper'), { recursive: true });
    fs.mkdirSync(path.join(layer, 'work'));
    fs.mkdirSync(path.join(checkout, 'node_modules'));
    const lower = path.join(snapshot.dir, 'files', 'node_modules');
    execFileSync('mount', [
      '-t',
      'overlay',
      'overlay',
      '-o',
      `lowerdir=${lower},upperdir=${layer}/upper,workdir=${layer}/work`,
      path.join(checkout, 'node_modules'),
    ]);
    fs.writeFileSync(path.join(checkout, 'node_modules', 'pkg', 'index.js'), 'written by a gate\n');

    await discardVerificationCheckout(deps, loopId);
    expect(await overlaysUnder(dataDir)).toEqual([]);
    expect(fs.readdirSync(path.dirname(checkout)).filter((n) => n.startsWith(loopId))).toEqual([]);
    expect(fs.readFileSync(path.join(lower, 'pkg', 'index.js'), 'utf8')).toBe('e\n');
  }, 120_000);
});
