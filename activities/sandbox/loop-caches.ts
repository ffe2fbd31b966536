import fs from 'node:fs/promises';
import { privateCacheDir, privateCachesRoot, seededListFile } from './cache-layout';
import { copyTree } from './copy-tree';
import { stripToolConfig } from './strip-tool-config';
import type { Sandbox } from './types';

// Each loop has package caches of its own (cache-layout.ts): a copy of the repository's shared caches for
// the lockfiles it set up, which only its own set-up commands write. What one loop's set-up plants there —
// a tool config, a patched package — never reaches another loop, and the copy is removed with the loop's
// workspace (service/workspace-janitor.ts). Build caches (Go's build cache, Cargo's target dir) are not
// kept here at all: each verification makes its own (verification-build-dir.ts).

interface CacheDeps {
  config: { cachesDir: string };
  sandbox: Sandbox;
}

/** A shared cache and the tool dir of a loop's caches it fills. */
export interface SharedCache {
  dir: string;
  subdir: string;
}

/** The loop's cache directory, its tool dirs made (owned by the sandbox user) when missing. */
export async function loopCaches(deps: CacheDeps, loopId: string): Promise<string> {
  const dir = privateCacheDir(deps.config.cachesDir, loopId);
  await fs.mkdir(privateCachesRoot(deps.config.cachesDir), { recursive: true, mode: 0o755 });
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  // Also makes any missing tool dir, as a plain directory of the sandbox user.
  await stripToolConfig(deps.sandbox, dir);
  return dir;
}

/**
 * Copies into the loop's caches each shared cache not copied yet (for this loop's current lockfiles),
 * then strips tool configuration from the result. Returns the loop's cache directory.
 */
export async function seedLoopCaches(deps: CacheDeps, loopId: string, shared: SharedCache[]): Promise<string> {
  const dir = await loopCaches(deps, loopId);
  const listFile = seededListFile(deps.config.cachesDir, loopId);
  const seeded = new Set((await fs.readFile(listFile, 'utf8').catch(() => '')).split('\n').filter(Boolean));
  for (const cache of shared) {
    if (seeded.has(cache.dir)) continue;
    await copyTree(cache.dir, `${dir}/${cache.subdir}`);
    await fs.appendFile(listFile, `${cache.dir}\n`);
  }
  await stripToolConfig(deps.sandbox, dir);
  return dir;
}
