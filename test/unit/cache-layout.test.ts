import {
  cacheEnvironment,
  pnpmBefore11StoreEnvironment,
  CACHE_SUBDIRS,
  lockfileKey,
  privateCacheDir,
  seededListFile,
  sharedCacheDir,
  TOOL_CONFIG_IN_CACHES,
} from '../../activities/sandbox/cache-layout';
import { FETCH_STEPS } from '../../activities/setup/cache-fetch-steps';

const url = 'https://example.invalid/acme/widgets.git';
const lock = (content: string) => [
  { path: 'Cargo.toml', content: Buffer.from('[package]\nname = "w"\n') },
  { path: 'Cargo.lock', content: Buffer.from(content) },
];

describe('shared caches', () => {
  it('are keyed by the repository and by the lockfile they were fetched for', () => {
    const one = sharedCacheDir('/c', url, 'cargo', lockfileKey(lock('version = 4\n')));
    expect(one).toMatch(/^\/c\/shared\/[0-9a-f]{16}\/cargo-[0-9a-f]{24}$/);
    expect(sharedCacheDir('/c', url, 'cargo', lockfileKey(lock('version = 4\n')))).toBe(one);
    // Another lockfile, another repository, another tool: another cache.
    expect(sharedCacheDir('/c', url, 'cargo', lockfileKey(lock('version = 3\n')))).not.toBe(one);
    expect(sharedCacheDir('/c', `${url}x`, 'cargo', lockfileKey(lock('version = 4\n')))).not.toBe(one);
    expect(sharedCacheDir('/c', url, 'go', lockfileKey(lock('version = 4\n')))).not.toBe(one);
  });

  it('tell apart inputs that concatenate to the same bytes', () => {
    const split = (a: string, b: string) => [
      { path: 'go.mod', content: Buffer.from(a) },
      { path: 'go.sum', content: Buffer.from(b) },
    ];
    expect(lockfileKey(split('ab', 'c'))).not.toBe(lockfileKey(split('a', 'bc')));
  });
});

describe('a loop’s caches', () => {
  it('are its own, with the record of what was copied in beside them, not inside', () => {
    expect(privateCacheDir('/c', 'loop-1')).toBe('/c/private/loop-1');
    expect(privateCacheDir('/c', 'loop-2')).not.toBe(privateCacheDir('/c', 'loop-1'));
    expect(seededListFile('/c', 'loop-1')).toBe('/c/private/loop-1.seeded');
    expect(seededListFile('/c', 'loop-1').startsWith(`${privateCacheDir('/c', 'loop-1')}/`)).toBe(false);
  });

  it('point every tool at a dir of its own there', () => {
    expect(cacheEnvironment('/c/private/l')).toMatchObject({
      CARGO_HOME: '/c/private/l/cargo',
      GOMODCACHE: '/c/private/l/go-mod',
      npm_config_cache: '/c/private/l/npm',
      PIP_CACHE_DIR: '/c/private/l/pip',
      UV_CACHE_DIR: '/c/private/l/uv',
      pnpm_config_store_dir: '/c/private/l/pnpm-store',
    });
    // npm warns about a `npm_config_*` it does not know in every command: only pnpm projects get pnpm's.
    expect(Object.keys(cacheEnvironment('/c/private/l')).filter((name) => /^npm_config_/i.test(name))).toEqual([
      'npm_config_cache',
    ]);
    expect(pnpmBefore11StoreEnvironment('/c/private/l')).toEqual({ npm_config_store_dir: '/c/private/l/pnpm-store' });
  });

  it('never keep the configuration Cargo and npx would read from a cache home', () => {
    expect(TOOL_CONFIG_IN_CACHES).toEqual(
      expect.arrayContaining(['cargo/config', 'cargo/config.toml', 'cargo/credentials.toml', 'cargo/bin', 'npm/_npx']),
    );
    // Every entry is inside a tool dir, so it is removed from the tool dir the sandbox sees.
    for (const rel of TOOL_CONFIG_IN_CACHES) expect(CACHE_SUBDIRS).toContain(rel.split('/')[0]);
  });
});

describe('fetch steps', () => {
  it('run only the package managers’ own downloads, on the manifest and lockfile alone', () => {
    expect(FETCH_STEPS.map((s) => [s.tool, s.files, s.argv])).toEqual([
      ['cargo', ['Cargo.toml', 'Cargo.lock'], ['cargo', 'fetch', '--locked']],
      ['go', ['go.mod', 'go.sum'], ['go', 'mod', 'download']],
      ['npm', ['package.json', 'package-lock.json'], ['npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund']],
    ]);
    for (const step of FETCH_STEPS) expect(CACHE_SUBDIRS).toContain(step.subdir);
    expect(FETCH_STEPS.find((s) => s.tool === 'go')!.env.GOTOOLCHAIN).toBe('local');
  });

  it('decline an npm lockfile with git or local dependencies, whose fetch would run their scripts', () => {
    const npm = FETCH_STEPS.find((s) => s.tool === 'npm')!;
    const lock = (entry: object) =>
      JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/x': entry } }, null, 2);
    expect(npm.declines!.test(lock({ resolved: 'git+ssh://git@github.com/acme/x.git#abc' }))).toBe(true);
    expect(npm.declines!.test(lock({ version: 'github:acme/x' }))).toBe(true);
    expect(npm.declines!.test(lock({ resolved: 'file:../x' }))).toBe(true);
    expect(npm.declines!.test(lock({ resolved: '../x', link: true }))).toBe(true);
    expect(npm.declines!.test(lock({ version: '1.0.0', resolved: 'https://registry.npmjs.org/x/-/x-1.0.0.tgz' }))).toBe(
      false,
    );
  });
});
