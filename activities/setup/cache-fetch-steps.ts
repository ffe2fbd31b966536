// The package managers' own fetch steps: each downloads what a lockfile names into the tool's cache and
// runs none of the repository's code (no build.rs, no install scripts, no project config). They run on a
// scratch project holding only the manifest and the lockfile (cache-fetch.ts), and they are the only
// writers of the shared caches.

export interface FetchStep {
  tool: string;
  /** The tool dir of a cache directory (cache-layout.ts) this step fills. */
  subdir: string;
  /** Copied from the work dir's root; the step runs only when all of them are regular files there. */
  files: string[];
  /** Placeholder files the manifest needs to load (Cargo wants a target), written empty. */
  stubs: string[];
  argv: string[];
  env: Record<string, string>;
  /** A lockfile matching this is not fetched for: the fetch would build or link something (the set-up still installs). */
  declines?: RegExp;
}

export const FETCH_STEPS: readonly FetchStep[] = [
  {
    tool: 'cargo',
    subdir: 'cargo',
    files: ['Cargo.toml', 'Cargo.lock'],
    stubs: ['src/lib.rs'],
    argv: ['cargo', 'fetch', '--locked'],
    env: {},
  },
  {
    tool: 'go',
    subdir: 'go-mod',
    files: ['go.mod', 'go.sum'],
    stubs: [],
    argv: ['go', 'mod', 'download'],
    // No toolchain download (go.mod's `toolchain` line would otherwise fetch and run another go).
    env: { GOTOOLCHAIN: 'local', GOFLAGS: '-modcacherw' },
  },
  {
    tool: 'npm',
    subdir: 'npm',
    files: ['package.json', 'package-lock.json'],
    stubs: [],
    argv: ['npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund'],
    env: {},
    // npm packs a git dependency by installing it and running its `prepare`; a local one is a link.
    declines: /"(resolved|version)":\s*"(git\+|git:|github:|gitlab:|bitbucket:|file:)|"link":\s*true/,
  },
];
