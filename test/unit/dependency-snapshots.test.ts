import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  attachSnapshot,
  detachSnapshots,
  findSnapshot,
  takeSnapshot,
} from '../../activities/setup/dependency-snapshots';
import { checkoutSetupKey } from '../../activities/setup/snapshot-inputs';
import { keyedFile, keyedTools, notKeepable, snapshotKey, type KeyedFile } from '../../activities/setup/snapshot-key';
import { snapshotsDir } from '../../activities/sandbox/cache-layout';
import type { Sandbox } from '../../activities/sandbox/types';
import type { SetupPlan } from '../../domain/setup';
import { git } from '../support/test-git';

// The dependency snapshot's key (what decides a set-up's result) and the decision to keep, find and link
// one, on real files and a real git checkout, without a sandbox (as root, attached as an overlay mount).

const URL = 'https://example.invalid/acme/widgets.git';
const npmPlan = (argv = ['npm', 'ci']): SetupPlan => ({
  commands: [{ argv, timeoutSeconds: 60, source: 'manifest-inference', detail: 'package-lock.json (npm)' }],
  outputs: ['node_modules/'],
  binDirs: [],
  corepack: [],
  notes: [],
});
const file = (p: string, text: string): KeyedFile => ({ path: p, content: Buffer.from(text) });
const tools = [{ name: 'npm', identity: '/usr/lib/npm-cli.js:100:1' }];
const key = (over: Partial<Parameters<typeof snapshotKey>[0]> = {}) =>
  snapshotKey({ repoUrl: URL, plan: npmPlan(), files: [file('package-lock.json', '{}')], tools, ...over });

describe('the snapshot key', () => {
  it('is the same for the same inputs in any order, and changes with each thing that decides the result', () => {
    const files = [file('package.json', '{"a":1}'), file('package-lock.json', '{"b":2}')];
    const one = key({ files });
    expect(one).toMatch(/^[0-9a-f]{24}$/);
    expect(key({ files: [...files].reverse() })).toBe(one);
    expect(key({ files: [files[0]!, file('package-lock.json', '{"b":3}')] })).not.toBe(one);
    expect(key({ files, repoUrl: `${URL}x` })).not.toBe(one);
    expect(key({ files, plan: npmPlan(['npm', 'install']) })).not.toBe(one);
    expect(key({ files, plan: { ...npmPlan(), outputs: ['.venv/'] } })).not.toBe(one);
    expect(key({ files, tools: [{ name: 'npm', identity: '/usr/lib/npm-cli.js:101:1' }] })).not.toBe(one);
    expect(key({ files, tools: [{ name: 'npm', identity: null }] })).not.toBe(one);
  });

  it('tells apart files whose names and contents concatenate to the same bytes', () => {
    expect(key({ files: [file('a', 'bc')] })).not.toBe(key({ files: [file('ab', 'c')] }));
  });

  it('reads manifests, lockfiles, package-manager config and the files a command names, not sources or installs', () => {
    const plan = npmPlan(['.venv/bin/python', '-m', 'pip', 'install', '-r', 'reqs/test.txt', '--constraint=c.txt']);
    for (const keyed of ['package.json', 'packages/a/package.json', 'requirements-dev.txt', '.npmrc', 'pom.xml'])
      expect(keyedFile(keyed, plan)).toBe(true);
    expect(keyedFile('reqs/test.txt', plan)).toBe(true);
    expect(keyedFile('c.txt', plan)).toBe(true);
    for (const other of ['src/index.ts', 'README.md', 'node_modules/x/package.json', '.venv/pyvenv.cfg'])
      expect(keyedFile(other, plan)).toBe(false);
  });

  it('includes the tools the commands run by name and the runtimes they run on', () => {
    expect(keyedTools(npmPlan(['.venv/bin/python', '-m', 'pip']))).toEqual(['java', 'node', 'python3']);
    expect(keyedTools(npmPlan(['mvn', 'test']))).toEqual(['java', 'mvn', 'node', 'python3']);
  });
});

describe('what is kept', () => {
  it('only installed dependencies, and not when a package.json builds at install', () => {
    expect(notKeepable(npmPlan(), [file('package.json', '{"scripts":{"test":"jest"}}')])).toBeNull();
    expect(notKeepable({ ...npmPlan(), outputs: ['target/'] }, [])).toBeNull();
    expect(notKeepable(npmPlan(), [file('packages/a/package.json', '{"scripts":{"prepare":"tsc"}}')])).toBe(
      'packages/a/package.json runs prepare at install',
    );
    expect(notKeepable({ ...npmPlan(), outputs: ['node_modules/', '.pnp.cjs'] }, [])).toMatch(/\.pnp\.cjs/);
    expect(notKeepable({ ...npmPlan(), commands: [] }, [])).toBe('no set-up commands');
  });
});

describe('a checkout’s snapshot', () => {
  const sandbox: Sandbox = { mode: 'none', owner: null } as unknown as Sandbox;
  let dir: string;
  let deps: { config: { cachesDir: string }; sandbox: Sandbox };
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'snapshots-')));
    deps = { config: { cachesDir: path.join(dir, 'caches') }, sandbox };
  });
  // As root the service attaches snapshots as overlay mounts: unmounted before anything is removed.
  const attached = process.getuid?.() === 0 ? 'overlay' : 'copy';
  afterEach(async () => {
    for (const name of fs.readdirSync(dir)) await detachSnapshots(path.join(dir, name));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A checkout of a repository with a package.json and lockfile, as set-up left it. */
  function checkout(name: string, lock = '{"lockfileVersion":3}'): string {
    const work = path.join(dir, name);
    fs.mkdirSync(work);
    git(work, 'init', '-q');
    fs.writeFileSync(path.join(work, '.gitignore'), 'node_modules/\n');
    fs.writeFileSync(path.join(work, 'package.json'), '{"devDependencies":{"dep":"1"}}');
    fs.writeFileSync(path.join(work, 'package-lock.json'), lock);
    fs.writeFileSync(path.join(work, 'index.js'), 'module.exports = 1;\n');
    git(work, 'add', '.');
    git(work, 'commit', '-qm', 'base');
    return work;
  }
  const install = (work: string) => {
    fs.mkdirSync(path.join(work, 'node_modules', 'dep'), { recursive: true });
    fs.writeFileSync(path.join(work, 'node_modules', 'dep', 'index.js'), 'module.exports = "pristine";\n');
  };
  const take = (work: string, k: string, extra: { restored?: string[] } = {}) =>
    takeSnapshot(deps, {
      loopId: 'loop',
      checkout: work,
      plan: npmPlan(),
      key: k,
      iterationSeq: 1,
      evidenceIds: ['e1'],
      restored: extra.restored ?? [],
    });

  it('is copied from a passed set-up and found again by its key for the next checkout', async () => {
    const first = checkout('one');
    const k = await checkoutSetupKey(first, npmPlan(), URL);
    install(first);
    const taken = await take(first, k.key!);
    expect(typeof taken).not.toBe('string');
    // The checkout keeps what its set-up installed; the snapshot is a copy of it.
    expect(fs.lstatSync(path.join(first, 'node_modules')).isDirectory()).toBe(true);
    const kept = path.join(snapshotsDir(deps.config.cachesDir, 'loop'), k.key!, 'files', 'node_modules');
    expect(fs.readFileSync(path.join(kept, 'dep', 'index.js'), 'utf8')).toContain('pristine');

    const second = checkout('two');
    const again = await checkoutSetupKey(second, npmPlan(), URL);
    expect(again.key).toBe(k.key);
    const found = await findSnapshot(deps, 'loop', again.key!);
    expect(found?.meta).toEqual({ key: k.key, iterationSeq: 1, evidenceIds: ['e1'], outputs: ['node_modules'] });
    expect(await attachSnapshot(second, found!)).toBe(attached);
    expect(fs.lstatSync(path.join(second, 'node_modules')).isDirectory()).toBe(true);
    expect(fs.readFileSync(path.join(second, 'node_modules', 'dep', 'index.js'), 'utf8')).toContain('pristine');
    // What a gate writes in its overlay or copy stays there.
    fs.writeFileSync(path.join(second, 'node_modules', 'dep', 'index.js'), 'module.exports = "changed";\n');
    expect(fs.readFileSync(path.join(kept, 'dep', 'index.js'), 'utf8')).toContain('pristine');
  });

  it("keeps a workspace package's relative link, which leads to the sources of the checkout it is copied into", async () => {
    const first = checkout('one');
    fs.mkdirSync(path.join(first, 'packages', 'money'), { recursive: true });
    fs.writeFileSync(path.join(first, 'packages', 'money', 'index.js'), 'module.exports = "source";\n');
    git(first, 'add', '.');
    git(first, 'commit', '-qm', 'a workspace package');
    install(first);
    fs.mkdirSync(path.join(first, 'node_modules', '@acme'));
    fs.symlinkSync('../../packages/money', path.join(first, 'node_modules', '@acme', 'money'));
    const taken = await take(first, 'k');
    expect(typeof taken).not.toBe('string');
    // The next verification's checkout, at the same path, with the package changed since.
    fs.rmSync(first, { recursive: true, force: true });
    const next = checkout('one');
    fs.mkdirSync(path.join(next, 'packages', 'money'), { recursive: true });
    fs.writeFileSync(path.join(next, 'packages', 'money', 'index.js'), 'module.exports = "changed source";\n');
    expect(await attachSnapshot(next, taken as Exclude<typeof taken, string>)).toBe(attached);
    const link = path.join(next, 'node_modules', '@acme', 'money');
    expect(fs.readlinkSync(link)).toBe('../../packages/money');
    expect(fs.readFileSync(path.join(link, 'index.js'), 'utf8')).toContain('changed source');
  });

  it('is not found for a changed lockfile', async () => {
    const first = checkout('one');
    const k = await checkoutSetupKey(first, npmPlan(), URL);
    install(first);
    await take(first, k.key!);
    const changed = await checkoutSetupKey(checkout('two', '{"lockfileVersion":2}'), npmPlan(), URL);
    expect(changed.key).not.toBe(k.key);
    expect(await findSnapshot(deps, 'loop', changed.key!)).toBeNull();
  });

  it('is not kept when set-up left anything else in the checkout or changed a tracked file', async () => {
    const built = checkout('built');
    install(built);
    fs.mkdirSync(path.join(built, 'dist'));
    fs.writeFileSync(path.join(built, 'dist', 'out.js'), '');
    expect(await take(built, 'k1')).toBe('set-up left dist in the checkout');
    const edited = checkout('edited');
    install(edited);
    fs.writeFileSync(path.join(edited, 'index.js'), 'changed');
    expect(await take(edited, 'k2')).toBe('set-up left index.js in the checkout');
    // A gate entrypoint the service put back is not set-up's change.
    expect(typeof (await take(edited, 'k2', { restored: ['index.js'] }))).not.toBe('string');
    expect(fs.existsSync(snapshotsDir(deps.config.cachesDir, 'loop') + '/k1')).toBe(false);
  });

  it('is copied, as by a service that is not root, where an overlay’s options cannot name its path', async () => {
    deps = { ...deps, config: { cachesDir: path.join(dir, 'caches,upperdir=') } };
    const first = checkout('one');
    install(first);
    const taken = await take(first, 'k');
    const second = checkout('two');
    expect(await attachSnapshot(second, taken as Exclude<typeof taken, string>)).toBe('copy');
    fs.writeFileSync(path.join(second, 'node_modules', 'dep', 'index.js'), 'module.exports = "changed";\n');
    const kept = path.join(snapshotsDir(deps.config.cachesDir, 'loop'), 'k', 'files', 'node_modules');
    expect(fs.readFileSync(path.join(kept, 'dep', 'index.js'), 'utf8')).toContain('pristine');
  });

  it('is not linked over something the checkout already has there', async () => {
    const first = checkout('one');
    install(first);
    const taken = await take(first, 'k');
    const second = checkout('two');
    fs.mkdirSync(path.join(second, 'node_modules'));
    expect(await attachSnapshot(second, taken as Exclude<typeof taken, string>)).toBeNull();
  });

  it('keeps the two most recently used snapshots of a loop', async () => {
    for (const k of ['a', 'b', 'c']) {
      const work = checkout(k);
      install(work);
      await take(work, k);
    }
    expect(fs.readdirSync(snapshotsDir(deps.config.cachesDir, 'loop')).sort()).toEqual(['b', 'c']);
  });
});
