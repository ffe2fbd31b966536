import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { handOver } from './hand-over';
import type { Sandbox } from './types';

// Package caches, one set per repository: the second loop on a repository installs from cache (npm,
// pnpm, yarn, corepack, pip/uv, Go modules, Cargo registry). Only set-up writes them; makers and gates
// read them. Per repository, not per worker: set-up runs the repository's own install scripts, so a
// hostile repository could otherwise plant code in another repository's dependencies. Build caches (Go's
// build cache, Cargo's target dir) are deliberately not shared: anything that could write one — the
// maker, or the committed code a gate runs — could leave a prebuilt test binary that a later
// verification would run instead of building the code under review.

/** Where each tool keeps its cache, relative to the repository's cache directory. */
const CACHE_VARIABLES: Record<string, string> = {
  npm_config_cache: 'npm',
  npm_config_store_dir: 'pnpm-store',
  YARN_CACHE_FOLDER: 'yarn',
  COREPACK_HOME: 'corepack',
  PIP_CACHE_DIR: 'pip',
  UV_CACHE_DIR: 'uv',
  GOMODCACHE: 'go-mod',
  CARGO_HOME: 'cargo',
};

export function repositoryCacheDir(cachesDir: string, repositoryUrl: string): string {
  return path.join(cachesDir, createHash('sha256').update(repositoryUrl).digest('hex').slice(0, 16));
}

/** The loop's repository's cache directory, created on first use. */
export async function repositoryCaches(
  deps: { config: { cachesDir: string }; sandbox: Sandbox },
  repositoryUrl: string,
): Promise<string> {
  const dir = repositoryCacheDir(deps.config.cachesDir, repositoryUrl);
  await ensureRepositoryCaches(deps.sandbox, dir);
  return dir;
}

/** The variables that point every tool at the repository's caches. */
export function cacheEnvironment(cacheDir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(CACHE_VARIABLES).map(([name, dir]) => [name, path.join(cacheDir, dir)]));
}

/** Creates the repository's cache directories (owned by the sandbox user) the first time they are needed. */
export async function ensureRepositoryCaches(sandbox: Sandbox, cacheDir: string): Promise<void> {
  const missing = [];
  for (const dir of Object.values(CACHE_VARIABLES)) {
    const full = path.join(cacheDir, dir);
    if (!(await fs.stat(full).catch(() => null))) missing.push(full);
  }
  if (missing.length === 0) return;
  for (const dir of missing) await fs.mkdir(dir, { recursive: true });
  await handOver(sandbox, ...missing);
  await fs.chmod(cacheDir, 0o755);
}
