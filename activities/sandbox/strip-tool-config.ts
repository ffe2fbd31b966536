import fs from 'node:fs/promises';
import path from 'node:path';
import { CACHE_SUBDIRS, TOOL_CONFIG_IN_CACHES } from './cache-layout';
import { handOverNewDirs } from './hand-over';
import type { Sandbox } from './types';

// Tool configuration is never read from a cache: whatever a set-up left there (a Cargo `config.toml`
// naming a test runner, installed cargo subcommands) is removed before anything else reads the cache.
// Run while no sandbox of the loop runs, so nothing can swap a path between the check and the removal.

export async function stripToolConfig(sandbox: Sandbox, cacheDir: string): Promise<string[]> {
  const removed: string[] = [];
  // A tool dir replaced by a symlink would lead the removals below (run by the service) somewhere else,
  // and point the tool at files the repository chose: it is made a plain, empty directory again.
  for (const sub of CACHE_SUBDIRS) {
    const dir = path.join(cacheDir, sub);
    const stat = await fs.lstat(dir).catch(() => null);
    if (stat?.isDirectory()) continue;
    if (stat) {
      await fs.rm(dir, { recursive: true, force: true });
      removed.push(sub);
    }
    await fs.mkdir(dir);
    await handOverNewDirs(sandbox, dir);
  }
  for (const rel of TOOL_CONFIG_IN_CACHES) {
    const file = path.join(cacheDir, rel);
    if (!(await fs.lstat(file).catch(() => null))) continue;
    await fs.rm(file, { recursive: true, force: true });
    removed.push(rel);
  }
  return removed;
}
