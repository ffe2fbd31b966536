import fs from 'node:fs/promises';
import path from 'node:path';

// The workspace write limit (SANDBOX_MAX_WORKSPACE_BYTES) is a measurement, not a quota: the writable trees
// are walked before the command, every few seconds while it runs and once after, and a command whose trees
// grew by more than the limit is killed. Between two walks it can write more than the limit (as fast as
// the disk goes for one interval); what it deletes counts against what it writes (net growth).

/** Disk blocks used by the files under `dirs` (hard links once, symlinks never followed). */
export async function treeBytes(dirs: string[]): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      // Removed meanwhile, or not readable: the command owns its tree and may do that.
      return;
    }
    for (const entry of entries) {
      const p = path.join(dir, entry.name);
      try {
        const st = await fs.lstat(p, { bigint: false });
        const key = `${st.dev}:${st.ino}`;
        if (!seen.has(key)) {
          seen.add(key);
          total += st.blocks * 512;
        }
        if (st.isDirectory()) await walk(p);
      } catch {
        // Gone between readdir and lstat.
      }
    }
  };
  for (const dir of dirs) await walk(dir);
  return total;
}

export interface GrowthWatch {
  /** Stops watching; the growth measured now, after the command. */
  stop(): Promise<number>;
}

/**
 * Measures `dirs` now (the baseline, awaited), then every `intervalMs` while the command runs, calling
 * `exceeded` once when they have grown by more than `limitBytes`.
 */
export async function watchGrowth(
  dirs: string[],
  limitBytes: number,
  intervalMs: number,
  exceeded: (grownBytes: number) => void,
): Promise<GrowthWatch> {
  const baseline = await treeBytes(dirs);
  let stopped = false;
  let fired = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const check = async () => {
    const grown = (await treeBytes(dirs)) - baseline;
    if (grown > limitBytes && !fired && !stopped) {
      fired = true;
      exceeded(grown);
    }
  };
  const schedule = () => {
    timer = setTimeout(() => {
      current = check().finally(() => {
        if (!stopped) schedule();
      });
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
      return (await treeBytes(dirs)) - baseline;
    },
  };
}
