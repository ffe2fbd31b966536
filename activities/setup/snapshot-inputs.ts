import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { SetupPlan } from '../../domain/setup';
import { git } from '../git';
import { keyedFile, keyedTools, notKeepable, snapshotKey, type KeyedFile, type ToolFingerprint } from './snapshot-key';

// Reads what snapshot-key.ts keys a checkout's set-up by: the tracked files it names (as they are in the
// checkout, after the gate entrypoints were put back) and the tools on the worker's PATH.

/** A manifest larger than this is not read: the set-up runs every time. */
const MAX_KEYED_BYTES = 32 * 1024 * 1024;

export type CheckoutKey = { key: string; notKept: null } | { key: null; notKept: string };

export async function checkoutSetupKey(
  checkout: string,
  plan: SetupPlan,
  repoUrl: string,
  searchPath = process.env.PATH ?? '',
): Promise<CheckoutKey> {
  const tracked = (await git(checkout, ['ls-files', '-z'])).split('\0').filter(Boolean);
  const files: KeyedFile[] = [];
  for (const file of tracked.filter((f) => keyedFile(f, plan))) {
    const content = await readKeyed(path.join(checkout, file));
    if (!content) return { key: null, notKept: `${file} is too large to key the set-up by` };
    files.push({ path: file, content });
  }
  const notKept = notKeepable(
    plan,
    files.filter((f) => path.posix.basename(f.path) === 'package.json'),
  );
  if (notKept) return { key: null, notKept };
  const tools = await Promise.all(keyedTools(plan).map((name) => fingerprint(name, searchPath)));
  return { key: snapshotKey({ repoUrl, plan, files, tools }), notKept: null };
}

/** A regular file's content, a symlink's target (never followed), empty for a file gone; null when too large. */
async function readKeyed(file: string): Promise<Buffer | null> {
  const stat = await fs.lstat(file).catch(() => null);
  if (!stat) return Buffer.alloc(0);
  if (stat.isSymbolicLink()) return Buffer.from(`symlink:${await fs.readlink(file)}`);
  if (!stat.isFile()) return Buffer.alloc(0);
  if (stat.size > MAX_KEYED_BYTES) return null;
  const handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The first `name` on PATH: its real path, size and change time (an upgraded tool is another tool). */
async function fingerprint(name: string, searchPath: string): Promise<ToolFingerprint> {
  for (const dir of searchPath.split(':').filter((d) => path.isAbsolute(d))) {
    const real = await fs.realpath(path.join(dir, name)).catch(() => null);
    const stat = real === null ? null : await fs.stat(real).catch(() => null);
    if (real !== null && stat?.isFile()) return { name, identity: `${real}:${stat.size}:${stat.mtimeMs}` };
  }
  return { name, identity: null };
}
