import fs from 'node:fs/promises';
import type { ApiPolicy } from './deps';
import { ApiError } from './errors';

/**
 * Refuses a new loop while the data directory's disk is nearly full: a loop that starts and then fails
 * half-way through a clone or an install helps nobody, and a full disk also stops the database.
 */
export async function checkFreeDisk(policy: ApiPolicy): Promise<void> {
  const { path, minFreeBytes } = policy.disk;
  if (minFreeBytes <= 0) return;
  const stats = await fs.statfs(path).catch(() => null);
  if (!stats) return;
  const free = stats.bavail * stats.bsize;
  if (free < minFreeBytes) {
    throw new ApiError(
      507,
      `only ${Math.floor(free / 2 ** 20)} MiB are free where loops keep their workspaces (${path}); new loops are refused below ${Math.floor(minFreeBytes / 2 ** 20)} MiB (MIN_FREE_DISK_MB)`,
    );
  }
}
