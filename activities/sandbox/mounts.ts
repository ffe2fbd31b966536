import fs from 'node:fs/promises';
import path from 'node:path';
import { runHostTool } from '../process/host-tool';

// The mounts the service made under its own directories (overlays of dependency snapshots,
// overlay-mount.ts), as the kernel lists them in /proc/self/mountinfo. They outlive a worker that
// crashes, so a tree is unmounted from what the kernel says, never from what a worker remembers, before it
// is removed: `rm -rf` through a live mount would delete through it.

const UMOUNT_LIMIT_MS = 60_000;

export interface MountEntry {
  mountPoint: string;
  fsType: string;
  /** The file system's own options (an overlay's lowerdir, upperdir, workdir). */
  superOptions: Record<string, string>;
}

/** Parses mountinfo (proc(5)): paths are octal-escaped (`\040` a space), the fields after ` - ` the file system's. */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const mountPoint = before.split(' ')[4];
    const [fsType, , options] = after.split(' ');
    if (!mountPoint || !fsType) continue;
    const superOptions: Record<string, string> = {};
    for (const option of (options ?? '').split(',')) {
      const at = option.indexOf('=');
      if (at > 0) superOptions[option.slice(0, at)] = unescape(option.slice(at + 1));
    }
    entries.push({ mountPoint: unescape(mountPoint), fsType, superOptions });
  }
  return entries;
}

function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

export async function currentMounts(): Promise<MountEntry[]> {
  return parseMountinfo(await fs.readFile('/proc/self/mountinfo', 'utf8'));
}

/** Whether `p` is `dir` or inside it (both absolute). */
export function within(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Unmounts every mount at or under each of `dirs` (one reading of the mount table), deepest first.
 * Lazily (MNT_DETACH): a command of an attempt Temporal gave up on may still be using one, and keeps its
 * view until it ends, while the path is free at once. Throws when one cannot be unmounted, so that nobody
 * removes the tree through it.
 */
export async function unmountUnder(...dirs: string[]): Promise<void> {
  // The kernel lists mount points by their real paths.
  const roots = await Promise.all(dirs.map((dir) => fs.realpath(dir).catch(() => path.resolve(dir))));
  const under = (await currentMounts())
    .map((m) => m.mountPoint)
    .filter((p) => roots.some((root) => within(root, p)))
    .sort((a, b) => b.length - a.length);
  for (const mountPoint of new Set(under)) await runTool('umount', ['--lazy', '--', mountPoint]);
}

/** Unmounts what is under `dir`, then removes it. */
export async function removeTree(dir: string): Promise<void> {
  await unmountUnder(dir);
  await fs.rm(dir, { recursive: true, force: true, maxRetries: 5 });
}

export function runTool(command: string, args: string[]): Promise<void> {
  return runHostTool(command, args, UMOUNT_LIMIT_MS, (reason) => `${command} ${args.join(' ')} failed: ${reason}`);
}
