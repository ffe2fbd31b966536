import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { SetupPlan } from '../../domain/setup';
import { git } from '../git';
import { snapshotsDir } from '../sandbox/cache-layout';
import { copyTree } from '../sandbox/copy-tree';
import { handOverNewDirs } from '../sandbox/hand-over';
import type { Sandbox } from '../sandbox/types';
import { keptOutput, REBUILT_OUTPUTS } from './snapshot-key';

// A verification set-up's installed dependencies (node_modules, a venv), kept per loop and key
// (snapshot-key.ts) so a later checkout with the same key gets them without installing:
//
//   $CACHE_DIR/private/<loop>.snapshots/<key>/files/<output>   what set-up installed, moved out of the checkout
//   $CACHE_DIR/private/<loop>.snapshots/<key>/meta.json         which set-up made it (its evidence); used-at
//
// Only a verification's set-up that passed makes one, before any gate runs. The checkout gets a symlink
// in each output's place, and the gates' sandbox mounts the snapshot read-only at its own path, so no gate
// (and no maker: nothing mounts it for one) can change what a later verification receives. The checkout's
// path is the same for every verification of a loop, so a venv's absolute paths (its scripts' shebangs,
// an editable install's .pth) hold in every checkout that receives it. What tools write inside
// node_modules (`.cache`, `.vite`) goes through a link to a directory of the checkout itself.

/** Snapshots kept per loop, the most recently used first (a backtrack may return to an older lockfile). */
const KEPT_PER_LOOP = 2;
/**
 * Directories inside node_modules that tools write: babel, nyc and terser caches; vite's optimised deps and
 * the bundled config it loads (`.vite-temp`, vitest.config.* included); vitest 0.x's results cache.
 */
const WRITABLE_IN_NODE_MODULES = ['.cache', '.vite', '.vite-temp', '.vitest'];
/** Where those writes go: a directory of the checkout, fresh with it (SERVICE_EXCLUDES keeps it out of commits). */
const WRITABLE_ROOT = '.engineering-loop/writable';

const metaSchema = z.object({
  key: z.string(),
  iterationSeq: z.number().int(),
  evidenceIds: z.array(z.string()),
  outputs: z.array(z.string()),
});
export type SnapshotMeta = z.infer<typeof metaSchema>;

export interface Snapshot {
  /** Mounted read-only into the gates' sandbox. */
  dir: string;
  meta: SnapshotMeta;
}

interface SnapshotDeps {
  config: { cachesDir: string };
  sandbox: Sandbox;
}

/** The loop's snapshot for `key`, or null; a found one is marked used (pruning keeps the recently used). */
export async function findSnapshot(deps: SnapshotDeps, loopId: string, key: string): Promise<Snapshot | null> {
  const dir = path.join(snapshotsDir(deps.config.cachesDir, loopId), key);
  const text = await fs.readFile(path.join(dir, 'meta.json'), 'utf8').catch(() => null);
  const meta = text === null ? null : metaSchema.safeParse(JSON.parse(text));
  if (!meta?.success || meta.data.key !== key) return null;
  const now = new Date();
  await fs.utimes(path.join(dir, 'meta.json'), now, now);
  return { dir, meta: meta.data };
}

/**
 * Moves what a passed set-up installed in `checkout` into a new snapshot and links it back. Returns why
 * it was not kept instead when set-up left anything else in the checkout (a build's output, a changed
 * tracked file) that a later checkout would then lack.
 */
export async function takeSnapshot(
  deps: SnapshotDeps,
  at: {
    loopId: string;
    checkout: string;
    plan: SetupPlan;
    key: string;
    iterationSeq: number;
    evidenceIds: string[];
    /** Tracked files the service itself put back (gate entrypoints at their base versions). */
    restored: string[];
  },
): Promise<Snapshot | string> {
  const installed = at.plan.outputs.map((o) => o.replace(/\/$/, '')).filter(keptOutput);
  const left = (await strayChanges(at.checkout, installed)).filter((f) => !at.restored.includes(f));
  // An editable install's metadata (setuptools writes it beside the package) is part of the install.
  const outputs = [...installed, ...left.filter((f) => f.endsWith('.egg-info'))];
  const stray = left.filter((f) => !outputs.includes(f));
  if (stray.length) return `set-up left ${stray.slice(0, 5).join(', ')} in the checkout`;
  const root = snapshotsDir(deps.config.cachesDir, at.loopId);
  const staging = path.join(root, `.staging-${randomUUID()}`);
  const dir = path.join(root, at.key);
  const made: string[] = [];
  try {
    await fs.mkdir(path.join(staging, 'files'), { recursive: true, mode: 0o755 });
    for (const output of outputs) {
      const from = path.join(at.checkout, output);
      if (!(await fs.lstat(from).catch(() => null))?.isDirectory()) continue;
      await fs.mkdir(path.dirname(path.join(staging, 'files', output)), { recursive: true, mode: 0o755 });
      await move(from, path.join(staging, 'files', output));
      await pinLinksOut(path.join(staging, 'files', output), from);
      made.push(output);
      if (output === 'node_modules') await linkWritable(at.checkout, path.join(staging, 'files', output));
    }
    const meta: SnapshotMeta = {
      key: at.key,
      iterationSeq: at.iterationSeq,
      evidenceIds: at.evidenceIds,
      outputs: made,
    };
    await fs.writeFile(path.join(staging, 'meta.json'), `${JSON.stringify(meta)}\n`);
    await fs.chmod(staging, 0o755);
    // An earlier attempt of this verification may have published the same key meanwhile: either is set-up's.
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(staging, dir);
    await prune(root, at.key);
    const snapshot = { dir, meta };
    await attachSnapshot(deps, at.checkout, snapshot);
    return snapshot;
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/**
 * Links each of the snapshot's outputs into a fresh checkout. False (and nothing linked) when the
 * checkout already has something there, or lacks the directory it goes in: then it is set up as usual.
 */
export async function attachSnapshot(deps: SnapshotDeps, checkout: string, snapshot: Snapshot): Promise<boolean> {
  for (const output of snapshot.meta.outputs) {
    const at = path.join(checkout, output);
    if ((await fs.lstat(at).catch(() => null)) || !(await fs.lstat(path.dirname(at)).catch(() => null))?.isDirectory())
      return false;
  }
  for (const output of snapshot.meta.outputs) {
    await fs.symlink(path.join(snapshot.dir, 'files', output), path.join(checkout, output));
    if (output === 'node_modules') await makeWritableDirs(deps.sandbox, checkout, output);
  }
  return true;
}

/** Untracked or changed paths set-up left in the checkout, besides its kept outputs, rebuilt outputs and bytecode. */
async function strayChanges(checkout: string, outputs: string[]): Promise<string[]> {
  const status = await git(checkout, [
    'status',
    '--porcelain=v1',
    '-z',
    '--ignored=matching',
    '--untracked-files=normal',
  ]);
  return status
    .split('\0')
    .filter(Boolean)
    .map((entry) => ({ code: entry.slice(0, 2), file: entry.slice(3).replace(/\/$/, '') }))
    .filter(({ code, file }) => {
      if (code !== '??' && code !== '!!') return true;
      const parts = file.split('/');
      if (parts.includes('__pycache__') || file.endsWith('.pyc')) return false;
      return !outputs.includes(file) && !(parts.length === 1 && REBUILT_OUTPUTS.has(file));
    })
    .map(({ file }) => file);
}

/**
 * Relative links that lead out of an output (a workspace package's `node_modules/@acme/money ->
 * ../packages/money`) would lead nowhere from the snapshot: each becomes an absolute link to where it led in
 * the checkout, whose path every verification of the loop shares, so it reaches that checkout's own sources.
 * Links inside the output (pnpm's `.pnpm` store, a venv's `lib64`) stay as they are.
 */
async function pinLinksOut(moved: string, original: string): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(at);
      if (!entry.isSymbolicLink()) continue;
      const target = await fs.readlink(at);
      if (path.isAbsolute(target)) continue;
      const led = path.resolve(path.join(original, path.relative(moved, dir)), target);
      if (led === original || led.startsWith(`${original}${path.sep}`)) continue;
      await fs.rm(at);
      await fs.symlink(led, at);
    }
  };
  await walk(moved);
}

/** node_modules/.cache and .vite become links to the checkout's own writable directories. */
async function linkWritable(checkout: string, nodeModules: string): Promise<void> {
  for (const name of WRITABLE_IN_NODE_MODULES) {
    const at = path.join(nodeModules, name);
    await fs.rm(at, { recursive: true, force: true });
    await fs.symlink(path.join(checkout, WRITABLE_ROOT, 'node_modules', name), at);
  }
}

async function makeWritableDirs(sandbox: Sandbox, checkout: string, output: string): Promise<void> {
  const dirs = [
    path.join(checkout, '.engineering-loop'),
    path.join(checkout, WRITABLE_ROOT),
    path.join(checkout, WRITABLE_ROOT, output),
    ...WRITABLE_IN_NODE_MODULES.map((name) => path.join(checkout, WRITABLE_ROOT, output, name)),
  ];
  for (const dir of dirs) {
    await fs.mkdir(dir, { mode: 0o755 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  await handOverNewDirs(sandbox, ...dirs);
}

/** A rename, or a copy across file systems ($CACHE_DIR elsewhere than $DATA_DIR). */
async function move(from: string, to: string): Promise<void> {
  try {
    await fs.rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await fs.mkdir(to, { mode: 0o755 });
    await copyTree(from, to);
    await fs.rm(from, { recursive: true, force: true });
  }
}

/** Keeps the loop's KEPT_PER_LOOP most recently used snapshots (`keep` among them), removes the rest. */
async function prune(root: string, keep: string): Promise<void> {
  const names = (await fs.readdir(root)).filter((n) => !n.startsWith('.') && n !== keep);
  const used = await Promise.all(
    names.map(async (name) => ({
      name,
      at: (await fs.stat(path.join(root, name, 'meta.json')).catch(() => null))?.mtimeMs ?? 0,
    })),
  );
  used.sort((a, b) => b.at - a.at);
  for (const { name } of used.slice(KEPT_PER_LOOP - 1))
    await fs.rm(path.join(root, name), { recursive: true, force: true });
}
