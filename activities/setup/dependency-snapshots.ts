import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { SetupPlan } from '../../domain/setup';
import { git } from '../git';
import { snapshotsDir } from '../sandbox/cache-layout';
import { copyTree } from '../sandbox/copy-tree';
import { currentMounts, unmountUnder, within } from '../sandbox/mounts';
import { canMountOverlays, mountOverlay, overlayPath } from '../sandbox/overlay-mount';
import { keptOutput, REBUILT_OUTPUTS } from './snapshot-key';

// A verification set-up's installed dependencies (node_modules, a venv), kept per loop and key
// (snapshot-key.ts) so a later checkout with the same key gets them without installing:
//
//   $CACHE_DIR/private/<loop>.snapshots/<key>/files/<output>   a copy of what set-up installed
//   $CACHE_DIR/private/<loop>.snapshots/<key>/meta.json         which set-up made it (its evidence); used-at
//   $DATA_DIR/verification/<loop>.layers/o-*/{upper,work}      a checkout's overlay layers (root service)
//
// Only a verification's set-up that passed makes one, before any gate runs, by copying its outputs. A later
// checkout gets them in constant time as a kernel overlay when the service can mount one (it runs as root):
// the snapshot is the read-only lower layer and an upper directory of the checkout's own takes every write,
// so its gates may write in their dependencies as tools do (vitest's typecheck writes a tsbuildinfo into
// vitest's own dist/, which is why a read-only bind mount was given up) while the snapshot stays as set-up
// made it. Otherwise (a service that is not root) it gets its own copy (`cp -a`: owners, modes and links as
// set-up left them), in time that grows with the files. No sandbox, a gate's or a maker's, mounts the
// snapshot or the layers; the gate sees the overlay through its bind of the checkout, which is recursive.
// The verification unmounts its overlays when it ends (run-verification.ts). One outlives a worker that
// crashes, so whatever removes a checkout unmounts what the kernel lists under it first (mounts.ts), and a
// snapshot that a mounted overlay reads from is never pruned. The
// checkout's path is the same for every verification of a loop, so a venv's absolute paths (its scripts'
// shebangs, an editable install's .pth) hold in every checkout that receives it.

/** Snapshots kept per loop, the most recently used first (a backtrack may return to an older lockfile). */
const KEPT_PER_LOOP = 2;

const metaSchema = z.object({
  key: z.string(),
  iterationSeq: z.number().int(),
  evidenceIds: z.array(z.string()),
  outputs: z.array(z.string()),
});
export type SnapshotMeta = z.infer<typeof metaSchema>;

export interface Snapshot {
  dir: string;
  meta: SnapshotMeta;
}

interface SnapshotDeps {
  config: { cachesDir: string };
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
      const kept = path.join(staging, 'files', output);
      await fs.mkdir(kept, { recursive: true, mode: 0o755 });
      await copyTree(from, kept);
      made.push(output);
    }
    const meta: SnapshotMeta = {
      key: at.key,
      iterationSeq: at.iterationSeq,
      evidenceIds: at.evidenceIds,
      outputs: made,
    };
    await fs.writeFile(path.join(staging, 'meta.json'), `${JSON.stringify(meta)}\n`);
    await fs.chmod(staging, 0o755);
    // An earlier attempt of this verification may have published the same key meanwhile: either is set-up's,
    // and one a live overlay reads from is kept (removing it would empty that checkout's dependencies).
    const inUse = await snapshotsInUse(root);
    const published = inUse.has(at.key) ? await findSnapshot(deps, at.loopId, at.key) : null;
    if (published) return published;
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(staging, dir);
    await prune(root, at.key, inUse);
    return { dir, meta };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** How a checkout received a snapshot: mounted as the lower layer of an overlay, or copied. */
export type Attached = 'overlay' | 'copy';

/** Where a checkout's overlay upper and work directories live: beside it, so no sandbox mounts them. */
export function layersDirOf(checkout: string): string {
  return `${checkout}.layers`;
}

/**
 * Gives each of the snapshot's outputs to a fresh checkout: an overlay mount when the service can make
 * one, else a copy. Null (and nothing attached) when the checkout already has something there, or lacks
 * the directory it goes in: then it is set up as usual.
 */
export async function attachSnapshot(checkout: string, snapshot: Snapshot): Promise<Attached | null> {
  for (const output of snapshot.meta.outputs) {
    const at = path.join(checkout, output);
    if ((await fs.lstat(at).catch(() => null)) || !(await fs.lstat(path.dirname(at)).catch(() => null))?.isDirectory())
      return null;
  }
  const layers = layersDirOf(checkout);
  // A path the mount options cannot name (a comma, a colon in DATA_DIR or CACHE_DIR) is copied instead.
  const overlay = overlayPath(snapshot.dir) && overlayPath(layers) && (await canMountOverlays(path.dirname(checkout)));
  if (overlay) {
    await detachSnapshots(checkout);
    await fs.mkdir(layers, { mode: 0o700 });
  }
  for (const output of snapshot.meta.outputs) {
    const at = path.join(checkout, output);
    const lower = path.join(snapshot.dir, 'files', output);
    await fs.mkdir(at);
    if (overlay) await mountOverlayAt(lower, await fs.mkdtemp(path.join(layers, 'o-')), at);
    else await copyTree(lower, at);
  }
  return overlay ? 'overlay' : 'copy';
}

/**
 * Unmounts the overlays attached to `checkout` (those a crashed worker left too: the kernel lists them) and
 * removes their layers. After a verification, and before anything removes the checkout: a mount held by
 * every checkout kept for a decision would also be copied into each sandbox's mount namespace.
 */
export async function detachSnapshots(checkout: string): Promise<void> {
  const layers = layersDirOf(checkout);
  // Each overlay's layers are made before its mount and removed after its unmount: with none, nothing is
  // mounted, and the mount table (every sandbox's on a shared host) is not read.
  if ((await fs.lstat(layers).catch(() => null)) === null) return;
  await unmountUnder(checkout, layers);
  await fs.rm(layers, { recursive: true, force: true, maxRetries: 5 });
}

/**
 * The merged directory's root takes its owner and mode from the upper directory, so that is made like
 * the snapshot's (the sandbox user's, group-writable under uid-range): a gate may add a package there.
 */
async function mountOverlayAt(lower: string, layer: string, at: string): Promise<void> {
  const upper = path.join(layer, 'upper');
  const work = path.join(layer, 'work');
  const root = await fs.stat(lower);
  await fs.mkdir(upper);
  await fs.mkdir(work);
  await fs.chown(upper, root.uid, root.gid);
  await fs.chmod(upper, root.mode & 0o7777);
  await mountOverlay({ lower, upper, work, at });
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
 * Keeps the loop's KEPT_PER_LOOP most recently used snapshots (`keep` among them), and any that a live
 * overlay mount reads from; removes the rest.
 */
async function prune(root: string, keep: string, inUse: Set<string>): Promise<void> {
  const names = (await fs.readdir(root)).filter((n) => !n.startsWith('.') && n !== keep);
  const used = await Promise.all(
    names.map(async (name) => ({
      name,
      at: (await fs.stat(path.join(root, name, 'meta.json')).catch(() => null))?.mtimeMs ?? 0,
    })),
  );
  used.sort((a, b) => b.at - a.at);
  for (const { name } of used.slice(KEPT_PER_LOOP - 1))
    if (!inUse.has(name)) await fs.rm(path.join(root, name), { recursive: true, force: true });
}

/** The snapshots under `root` that an overlay mount (of this worker or of one that crashed) has as its lower layer. */
async function snapshotsInUse(root: string): Promise<Set<string>> {
  const roots = [root, await fs.realpath(root)];
  const names = new Set<string>();
  for (const mount of await currentMounts()) {
    const lower = mount.fsType === 'overlay' ? mount.superOptions.lowerdir : undefined;
    const from = lower && roots.find((r) => within(r, lower) && r !== lower);
    if (from) names.add(path.relative(from, lower).split(path.sep)[0]!);
  }
  return names;
}
