import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { runTool, unmountUnder } from './mounts';

// A kernel overlay mount: a read-only lower directory seen through a writable upper one, so a tree can be
// given to a checkout in constant time whatever its size, and what is written there lands in the upper
// directory alone. Only a root service can mount one; the probe tries once per process and directory.

const probes = new Map<string, Promise<boolean>>();

/**
 * Whether this process can make overlay mounts whose upper directories live under `scratchDir`: it runs
 * as root, and a trial mount there (the upper directory's file system must support an overlay's) works.
 */
export function canMountOverlays(scratchDir: string): Promise<boolean> {
  let probe = probes.get(scratchDir);
  if (!probe) {
    probe = tryMount(scratchDir);
    probes.set(scratchDir, probe);
  }
  return probe;
}

async function tryMount(scratchDir: string): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  const dir = path.join(scratchDir, `.overlay-probe-${randomUUID()}`);
  const layers = {
    lower: path.join(dir, 'lower'),
    upper: path.join(dir, 'upper'),
    work: path.join(dir, 'work'),
    at: path.join(dir, 'merged'),
  };
  try {
    for (const d of Object.values(layers)) await fs.mkdir(d, { recursive: true });
    await fs.writeFile(path.join(layers.lower, 'seen'), '');
    await mountOverlay(layers);
    return await fs.access(path.join(layers.at, 'seen')).then(
      () => true,
      () => false,
    );
  } catch {
    return false;
  } finally {
    await unmountUnder(dir).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The mount options' separators: a path holding one would be read as another option or layer. */
const UNSAFE = /[,:\\=\s]/;

/** Whether an overlay's mount options can name `p` (else the caller copies instead). */
export function overlayPath(p: string): boolean {
  return path.isAbsolute(p) && !UNSAFE.test(p);
}

/** Mounts `lower` (read-only) under `upper` at `at`; `work` is overlayfs's own, on `upper`'s file system. */
export async function mountOverlay(layers: { lower: string; upper: string; work: string; at: string }): Promise<void> {
  for (const p of Object.values(layers))
    if (!overlayPath(p)) throw new Error(`not a path an overlay mount can take: ${p}`);
  const options = `lowerdir=${layers.lower},upperdir=${layers.upper},workdir=${layers.work}`;
  await runTool('mount', ['-t', 'overlay', 'overlay', '-o', options, '--', layers.at]);
}
