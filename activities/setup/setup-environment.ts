import fs from 'node:fs/promises';
import path from 'node:path';
import type { SetupPlan } from '../../domain/setup';
import { pnpmBefore11StoreEnvironment } from '../sandbox/cache-layout';

// What set-up leaves for the commands that come after it in the same work dir (gates, the maker): the
// virtual environment's bin directory first on PATH, pnpm/yarn through corepack, and where a pnpm before 11
// finds the loop's store (cache-layout.ts pnpmBefore11StoreEnvironment). Corepack's
// downloads live in COREPACK_HOME, one of the loop's caches (loop-caches.ts), so a gate
// without network finds the package manager the set-up fetched.

/**
 * Corepack never prompts, never rewrites package.json's packageManager; the operator may relax its key
 * check (a mirror without signatures), and may name the CA of a TLS-inspecting proxy or private registry
 * (NODE_EXTRA_CA_CERTS): corepack and the pnpm/yarn it runs are Node programs with Node's own CA list,
 * which, unlike npm's `cafile` setting, no npmrc can change.
 */
const COREPACK_PASSED_THROUGH = [
  'COREPACK_INTEGRITY_KEYS',
  'COREPACK_NPM_REGISTRY',
  'COREPACK_NPM_TOKEN',
  'NODE_EXTRA_CA_CERTS',
] as const;

export interface SetupEnvironment {
  env: Record<string, string>;
  /** Host paths the command must be able to read (the shims directory). */
  readOnly: string[];
}

export async function setupEnvironment(
  dataDir: string,
  workDir: string,
  plan: SetupPlan | undefined,
  /** The loop's caches the command will see (its policy's `caches.dir`). */
  cacheDir: string,
  parent: NodeJS.ProcessEnv = process.env,
  /** Set-up itself: the venv's bin goes on PATH before it exists (a later command uses what an earlier one made). */
  forSetup = false,
): Promise<SetupEnvironment> {
  const env: Record<string, string> = {};
  const readOnly: string[] = [];
  const front: string[] = [];
  for (const rel of plan?.binDirs ?? []) {
    const dir = path.join(workDir, rel);
    if (forSetup || (await isDir(dir))) front.push(dir);
  }
  if (front.some((d) => d.endsWith(`${path.sep}.venv${path.sep}bin`))) env.VIRTUAL_ENV = path.join(workDir, '.venv');
  if (plan?.corepack.length) {
    const shims = await corepackShims(dataDir, plan.corepack);
    front.push(shims);
    readOnly.push(shims);
    env.COREPACK_ENABLE_DOWNLOAD_PROMPT = '0';
    env.COREPACK_ENABLE_AUTO_PIN = '0';
    for (const name of COREPACK_PASSED_THROUGH) {
      const value = parent[name];
      if (value !== undefined) env[name] = value;
    }
  }
  if (plan?.corepack.includes('pnpm')) Object.assign(env, pnpmBefore11StoreEnvironment(cacheDir));
  if (front.length) env.PATH = [...front, parent.PATH ?? '/usr/bin:/bin'].join(':');
  return { env, readOnly };
}

/** `pnpm`, `yarn` … as scripts that run them through corepack (the system's own shims include npm, which must stay npm). */
async function corepackShims(dataDir: string, managers: string[]): Promise<string> {
  const dir = path.join(dataDir, 'toolchain-shims');
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  const names = managers.flatMap((m) => (m === 'pnpm' ? ['pnpm', 'pnpx'] : m === 'yarn' ? ['yarn', 'yarnpkg'] : [m]));
  for (const name of names) {
    const manager = name === 'pnpx' ? 'pnpx' : name === 'yarnpkg' ? 'yarn' : name;
    const file = path.join(dir, name);
    const text = `#!/bin/sh\nexec corepack ${manager} "$@"\n`;
    if ((await fs.readFile(file, 'utf8').catch(() => null)) !== text) {
      const tmp = `${file}.${process.pid}.tmp`;
      await fs.writeFile(tmp, text, { mode: 0o755 });
      await fs.rename(tmp, file);
    }
  }
  await fs.chmod(dir, 0o755);
  return dir;
}

async function isDir(p: string): Promise<boolean> {
  return fs.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
