import fs from 'node:fs/promises';
import path from 'node:path';
import { CACHE_SUBDIRS, TOOL_CONFIG_IN_CACHES } from './cache-layout';
import { handOverNewDirs } from './hand-over';
import type { Sandbox } from './types';

// Tool configuration is never read from a cache: whatever a set-up left there (a Cargo `config.toml`
// naming a test runner, installed cargo subcommands) is removed before anything else reads the cache.
// Run while no sandbox of the loop runs, so nothing can swap a path between the check and the removal.

export async function stripToolConfig(sandbox: Sandbox, cacheDir: string): Promise<string[]> {
  // Each path is checked beside the others (they are independent, and one level deep), the tool dirs
  // before the files in them.
  const dirs = await Promise.all(CACHE_SUBDIRS.map((sub) => plainToolDir(sandbox, cacheDir, sub)));
  const files = await Promise.all(TOOL_CONFIG_IN_CACHES.map((rel) => removedConfig(cacheDir, rel)));
  return [...dirs, ...files].filter((removed): removed is string => removed !== null);
}

/**
 * A tool dir replaced by a symlink would lead the removals below (run by the service) somewhere else, and
 * point the tool at files the repository chose: it is made a plain, empty directory again. Returns `sub`
 * when something else stood there.
 */
async function plainToolDir(sandbox: Sandbox, cacheDir: string, sub: string): Promise<string | null> {
  const dir = path.join(cacheDir, sub);
  const stat = await fs.lstat(dir).catch(() => null);
  if (stat?.isDirectory()) return null;
  if (stat) await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir);
  await handOverNewDirs(sandbox, dir);
  return stat ? sub : null;
}

/** Removes the tool configuration at `rel` if there is any; returns `rel` then. */
async function removedConfig(cacheDir: string, rel: string): Promise<string | null> {
  const file = path.join(cacheDir, rel);
  if (!(await fs.lstat(file).catch(() => null))) return null;
  await fs.rm(file, { recursive: true, force: true });
  return rel;
}
