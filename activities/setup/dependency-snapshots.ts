import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { SetupPlan } from '../../domain/setup';
import { git } from '../git';
import { snapshotsDir } from '../sandbox/cache-layout';
import { copyTree } from '../sandbox/copy-tree';
import { keptOutput, REBUILT_OUTPUTS } from './snapshot-key';

// A verification set-up's installed dependencies (node_modules, a venv), kept per loop and key
// (snapshot-key.ts) so a later checkout with the same key gets them without installing:
//
//   $CACHE_DIR/private/<loop>.snapshots/<key>/files/<output>   a copy of what set-up installed
//   $CACHE_DIR/private/<loop>.snapshots/<key>/meta.json         which set-up made it (its evidence); used-at
//
// Only a verification's set-up that passed makes one, before any gate runs, by copying its outputs. A later
// checkout gets its own copy (`cp -a`: owners, modes and links as set-up left them), so its gates may write
// in their dependencies as tools do (vitest's typecheck writes a tsbuildinfo into vitest's own dist/) while
// the snapshot stays as set-up made it: no sandbox mounts it, for a gate or a maker. The checkout's path is
// the same for every verification of a loop, so a venv's absolute paths (its scripts' shebangs, an editable
// install's .pth) hold in every checkout that receives it.

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
    // An earlier attempt of this verification may have published the same key meanwhile: either is set-up's.
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(staging, dir);
    await prune(root, at.key);
    return { dir, meta };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/**
 * Copies each of the snapshot's outputs into a fresh checkout. False (and nothing copied) when the checkout
 * already has something there, or lacks the directory it goes in: then it is set up as usual.
 */
export async function attachSnapshot(checkout: string, snapshot: Snapshot): Promise<boolean> {
  for (const output of snapshot.meta.outputs) {
    const at = path.join(checkout, output);
    if ((await fs.lstat(at).catch(() => null)) || !(await fs.lstat(path.dirname(at)).catch(() => null))?.isDirectory())
      return false;
  }
  for (const output of snapshot.meta.outputs) {
    const at = path.join(checkout, output);
    await fs.mkdir(at);
    await copyTree(path.join(snapshot.dir, 'files', output), at);
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
