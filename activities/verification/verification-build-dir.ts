import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivityDeps } from '../deps';
import { handOverNewDirs } from '../sandbox/hand-over';
import { goStdCache, seedGoCache } from './go-std-cache';

// Build output the gates of one verification share (Cargo's target dir, Go's build cache), made afresh
// each time and kept outside the checkout: a test binary the maker built and committed (a `tmp-build/`
// named by `.cargo/config.toml`, a `target/` let in by a `.gitignore` negation) is never what a gate
// runs. The variables outrank the repository's own configuration.

export async function freshBuildDir(
  deps: ActivityDeps,
  loopId: string,
  { go }: { go: boolean },
): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = path.join(deps.config.dataDir, 'verification-build', loopId);
  const goCache = path.join(dir, 'go-build');
  const seed = go ? goStdCache(deps) : null;
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  await handOverNewDirs(deps.sandbox, dir);
  // A Go verification starts from the standard library already compiled (go-std-cache.ts).
  const seeded = await seed;
  if (seeded) await seedGoCache(deps, seeded, goCache);
  return { dir, env: { CARGO_TARGET_DIR: path.join(dir, 'cargo-target'), GOCACHE: goCache } };
}

/**
 * An empty directory in the build dir for one run's test report (test-reporter.ts), owned by the
 * sandbox user so the runner can write there; `name` tells the runs of one verification apart.
 */
export async function freshReportDir(deps: ActivityDeps, buildDir: string, name: string): Promise<string> {
  const reports = path.join(buildDir, 'test-reports');
  const dir = path.join(reports, name);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  // Another run's report directory beside it was handed over when it was made.
  await handOverNewDirs(deps.sandbox, reports, dir);
  return dir;
}
