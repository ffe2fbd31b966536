import { createHash } from 'node:crypto';
import path from 'node:path';

// Where package caches live and what they are keyed by (pure: no file is read here).
//
//   $CACHE_DIR/shared/<url hash>/<tool>-<lockfile hash>/   written only by that tool's own fetch step
//                                                           (cache-fetch.ts), which runs no repository code
//   $CACHE_DIR/private/<loop id>/<tool dir>/                the loop's copy: its set-up writes it, its
//                                                           makers and gates read it; gone with the loop
//   $CACHE_DIR/private/<loop id>.snapshots/<key>/          a verification set-up's installed dependencies
//                                                           (dependency-snapshots.ts): the lower layer of
//                                                           later checkouts' overlays (or copied into them);
//                                                           no sandbox mounts it
//
// A shared cache is keyed by the repository and by the lockfile it was fetched for, so what one branch's
// lockfile fetched is never mixed with another's; and nothing but the fetcher ever writes it.

/** Gradle's home (GRADLE_USER_HOME), which read-only caches cannot simply hand on (gradle-home.ts). */
export const GRADLE_CACHE = 'gradle';

/** Where each tool keeps its cache, relative to a loop's private cache directory. */
export const CACHE_VARIABLES: Record<string, string> = {
  npm_config_cache: 'npm',
  // pnpm 11 reads only pnpm_config_*; npm ignores the name. pnpm 10 and older: pnpmBefore11StoreEnvironment.
  pnpm_config_store_dir: 'pnpm-store',
  YARN_CACHE_FOLDER: 'yarn',
  COREPACK_HOME: 'corepack',
  PIP_CACHE_DIR: 'pip',
  UV_CACHE_DIR: 'uv',
  GOMODCACHE: 'go-mod',
  CARGO_HOME: 'cargo',
  GRADLE_USER_HOME: GRADLE_CACHE,
};

/** Maven has no variable for its local repository, only a system property (MAVEN_OPTS reaches its JVM). */
const MAVEN_REPOSITORY = 'maven';

export const CACHE_SUBDIRS = [...Object.values(CACHE_VARIABLES), MAVEN_REPOSITORY];

/**
 * Tool configuration and executables a tool would pick up from its cache home: never in a shared cache,
 * never in a copy handed to a loop, removed again after every set-up (strip-tool-config.ts). Cargo reads
 * `config.toml` (a test `runner`, a `rustc-wrapper`) and credentials from CARGO_HOME and runs external
 * subcommands from its `bin`; npx runs what its cache holds. The others are not read from a cache dir by
 * the tools today; removing them keeps it that way if one ever starts.
 */
export const TOOL_CONFIG_IN_CACHES: readonly string[] = [
  'cargo/config',
  'cargo/config.toml',
  'cargo/credentials',
  'cargo/credentials.toml',
  'cargo/bin',
  'npm/.npmrc',
  'npm/_npx',
  'pip/pip.conf',
  'uv/uv.toml',
  'yarn/.yarnrc',
  'yarn/.yarnrc.yml',
  'gradle/gradle.properties',
  'gradle/init.gradle',
  'gradle/init.gradle.kts',
  'gradle/init.d',
];

export function urlKey(repositoryUrl: string): string {
  return sha256(repositoryUrl).slice(0, 16);
}

/** The key of one fetch: the files it read (path and content), in the order given. */
export function lockfileKey(files: readonly { path: string; content: Buffer }[]): string {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file.path}\0${file.content.length}\0`);
    hash.update(file.content);
  }
  return hash.digest('hex').slice(0, 24);
}

export function sharedCacheDir(cachesDir: string, repositoryUrl: string, tool: string, lockKey: string): string {
  return path.join(cachesDir, 'shared', urlKey(repositoryUrl), `${tool}-${lockKey}`);
}

export function privateCachesRoot(cachesDir: string): string {
  return path.join(cachesDir, 'private');
}

/** The loop's own caches (mounted into its sandboxes). */
export function privateCacheDir(cachesDir: string, loopId: string): string {
  return path.join(privateCachesRoot(cachesDir), loopId);
}

/** Which shared caches were copied into the loop's caches: beside them, so no sandbox can write it. */
export function seededListFile(cachesDir: string, loopId: string): string {
  return path.join(privateCachesRoot(cachesDir), `${loopId}.seeded`);
}

/** A loop's dependency snapshots: beside its caches, never inside anything a sandbox may write. */
export function snapshotsDir(cachesDir: string, loopId: string): string {
  return path.join(privateCachesRoot(cachesDir), `${loopId}.snapshots`);
}

/** The variables that point every tool at a cache directory laid out like a loop's. */
export function cacheEnvironment(cacheDir: string): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(CACHE_VARIABLES).map(([name, dir]) => [name, path.join(cacheDir, dir)])),
    MAVEN_OPTS: `-Dmaven.repo.local=${path.join(cacheDir, MAVEN_REPOSITORY)}`,
  };
}

/**
 * pnpm 10 and older read their store from npm's variable (`npm_config_store_dir`), which npm itself warns
 * about as an unknown config ("npm warn Unknown env config "store-dir"") in every command it runs. So it is
 * set only for repositories that use pnpm (setup-environment.ts), not in cacheEnvironment.
 */
export function pnpmBefore11StoreEnvironment(cacheDir: string): Record<string, string> {
  return { npm_config_store_dir: path.join(cacheDir, CACHE_VARIABLES.pnpm_config_store_dir!) };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
