import fs from 'node:fs/promises';
import path from 'node:path';
import { loopsEndedBefore } from '../store/loops';
import type { PrismaClient } from '../store/db';
import type { ServiceConfig } from '../config/service-config';
import { privateCachesRoot } from '../activities/sandbox/cache-layout';
import { removeTree } from '../activities/sandbox/mounts';

// A worker removes the working copies of loops that ended longer ago than the retention: the branch has
// been delivered or the change is in the report, and a finished loop never runs again. Only directories
// on this worker's own disk are looked at, so the cost follows what is there, not the loop table.

const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Per loop: its workspace, verification checkout (and its overlays' layers, `<loop>.layers`), control
 * files and package caches (`<loop>` and `<loop>.seeded` under `$CACHE_DIR/private`), its dependency
 * snapshots (`<loop>.snapshots`); review checkouts are named `<loop>-<n>`.
 */
export async function removeExpiredWorkspaces(
  prisma: PrismaClient,
  config: Readonly<ServiceConfig>,
  now = new Date(),
): Promise<string[]> {
  const dirs = [
    ...['workspaces', 'verification', 'verification-build', 'control', 'review-checkouts'].map((d) =>
      path.join(config.dataDir, d),
    ),
    privateCachesRoot(config.cachesDir),
  ];
  const entries = (
    await Promise.all(dirs.map(async (dir) => (await fs.readdir(dir).catch(() => [])).map((name) => ({ dir, name }))))
  ).flat();
  const loopIdOf = (name: string) => name.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/)?.[0];
  const ids = [...new Set(entries.map((e) => loopIdOf(e.name)).filter((id): id is string => id !== undefined))];
  if (ids.length === 0) return [];
  const cutoff = new Date(now.getTime() - config.workspaceRetentionHours * 3_600_000);
  const expired = await loopsEndedBefore(prisma, ids, cutoff);
  const expiredIds = new Set(expired.map((l) => l.id));
  for (const entry of entries) {
    const id = loopIdOf(entry.name);
    // A verification checkout may still have its snapshots' overlays mounted, even after a worker crash.
    if (id && expiredIds.has(id)) await removeTree(path.join(entry.dir, entry.name));
  }
  return [...expiredIds];
}

/** Sweeps now and then every ten minutes; the returned function stops it. */
export function startWorkspaceJanitor(
  prisma: PrismaClient,
  config: Readonly<ServiceConfig>,
  log: (line: string) => void,
): () => void {
  const sweep = () =>
    removeExpiredWorkspaces(prisma, config).then(
      (removed) =>
        removed.length > 0 &&
        log(
          `removed the workspaces of ${removed.length} loop(s) that ended over ${config.workspaceRetentionHours} h ago`,
        ),
      (err: unknown) => log(`workspace clean-up failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  void sweep();
  const timer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
