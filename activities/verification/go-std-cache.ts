import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivityDeps } from '../deps';
import { childEnvironment } from '../process/child-environment';
import { runCommand } from '../process/run-command';
import { handOver, handOverNewDirs } from '../sandbox/hand-over';

// Go compiles the standard library into its build cache on first use: some 25 s of CPU for a test, vet
// and build of a small module, and every verification has a fresh cache (verification-build-dir.ts), so
// a Go repository paid it on every iteration. The worker builds that part of std once per toolchain —
// from a scratch module of its own, no repository's code, in the sandbox as the gates run — and each Go
// verification starts from a copy. Only the service writes the seed; no sandbox mounts it.

/** Packages most Go code and its tests import; what they pull in is compiled too. */
const SCRATCH_IMPORTS = [
  'bytes',
  'context',
  'encoding/json',
  'errors',
  'fmt',
  'io',
  'math',
  'os',
  'path/filepath',
  'regexp',
  'sort',
  'strconv',
  'strings',
  'sync',
  'time',
];
const BUILD_LIMIT_MS = 10 * 60_000;
const READY = 'ready';

const seeds = new Map<string, Promise<string | null>>();

/** What building a seed needs of the worker's dependencies (the test set-up builds one too). */
type SeedDeps = Pick<ActivityDeps, 'config' | 'sandbox'>;

/** The seed build cache for this worker's Go toolchain, built on first use; null when there is none to build. */
export function goStdCache(deps: SeedDeps): Promise<string | null> {
  const root = path.join(deps.config.dataDir, 'go-std-cache');
  let seed = seeds.get(root);
  if (!seed) seeds.set(root, (seed = buildSeed(deps, root).catch(() => null)));
  return seed;
}

async function buildSeed(deps: SeedDeps, root: string): Promise<string | null> {
  const version = await goVersion(deps, root);
  if (!version) return null;
  const dir = path.join(root, createHash('sha256').update(version).digest('hex').slice(0, 16));
  if (await exists(path.join(dir, READY))) return path.join(dir, 'cache');
  const work = await fs.mkdtemp(path.join(root, 'build-'));
  try {
    const module = path.join(work, 'module');
    const cache = path.join(work, 'cache');
    await fs.mkdir(module);
    await fs.mkdir(cache);
    await fs.writeFile(path.join(module, 'go.mod'), 'module example.invalid/seed\n\ngo 1.21\n');
    const imports = SCRATCH_IMPORTS.map((p) => `\t_ "${p}"`).join('\n');
    await fs.writeFile(path.join(module, 'seed.go'), `package seed\n\nimport (\n${imports}\n)\n`);
    await fs.writeFile(
      path.join(module, 'seed_test.go'),
      'package seed\n\nimport "testing"\n\nfunc TestSeed(t *testing.T) {}\n',
    );
    await handOver(deps.sandbox, work);
    for (const argv of [
      ['go', 'test', '-json', './...'],
      ['go', 'vet', './...'],
      ['go', 'build', './...'],
    ]) {
      const result = await inSandbox(deps, module, [cache], argv, { GOCACHE: cache });
      if (result.exitCode !== 0) return null;
    }
    await fs.mkdir(dir, { recursive: true });
    // Another worker on the same data directory may have got there first: its seed is as good.
    await fs.rename(cache, path.join(dir, 'cache')).catch(async (err: unknown) => {
      if (!(await exists(path.join(dir, 'cache')))) throw err;
    });
    await fs.writeFile(path.join(dir, READY), `${version}\n`);
    return path.join(dir, 'cache');
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** `go version` as the sandbox sees it (GOTOOLCHAIN=local: nothing is downloaded); null without Go. */
async function goVersion(deps: SeedDeps, root: string): Promise<string | null> {
  await fs.mkdir(root, { recursive: true });
  const probe = await fs.mkdtemp(path.join(root, 'probe-'));
  try {
    await handOverNewDirs(deps.sandbox, probe);
    const result = await inSandbox(deps, probe, [], ['go', 'version']);
    return result.exitCode === 0 ? result.stdout.trim() : null;
  } finally {
    await fs.rm(probe, { recursive: true, force: true });
  }
}

function inSandbox(deps: SeedDeps, dir: string, writable: string[], argv: string[], env = {}) {
  return runCommand({
    argv,
    cwd: dir,
    workspaceRoot: dir,
    timeoutMs: BUILD_LIMIT_MS,
    sandbox: { sandbox: deps.sandbox, policy: { workDir: dir, writable, egress: null } },
    env: childEnvironment({ GOTOOLCHAIN: 'local', ...env }),
    outputCapBytes: 64 * 1024,
  });
}

/** Copies the seed into a verification's fresh GOCACHE, handed to the sandbox user. */
export async function seedGoCache(deps: ActivityDeps, seed: string, goCache: string): Promise<void> {
  await fs.cp(seed, goCache, { recursive: true });
  await handOver(deps.sandbox, goCache);
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
