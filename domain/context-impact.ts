// The context impact of a delivered change (docs/design.md §9): how much of what a person or an agent
// knows about the repository it invalidates, read from the diff alone. NONE: code inside modules that
// already exist. TARGETED: a manifest or lockfile, a new top-level module, the loop's own repository
// configuration — re-read those parts. MAJOR: the build pipeline (CI files), the workspace layout, or a
// build system added or removed — re-read the whole repository. Pure, so every rule is unit-tested.

export type ContextImpactLevel = 'NONE' | 'TARGETED' | 'MAJOR';

export interface ContextImpact {
  level: ContextImpactLevel;
  /** Why, one line per rule that applied, with the files (a few) that made it apply. */
  reasons: string[];
}

/** One changed path, as `git diff --name-status` says it: A(dded), D(eleted), M(odified), R(enamed: both paths). */
export interface ChangedFile {
  status: 'A' | 'D' | 'M' | 'R';
  path: string;
}

const CI_FILES = [
  /^\.github\/workflows\//,
  /^\.github\/actions\//,
  /^\.gitlab-ci\.yml$/,
  /^\.gitlab\//,
  /^\.circleci\//,
  /^Jenkinsfile$/,
  /^azure-pipelines\.ya?ml$/,
  /^\.buildkite\//,
  /^\.travis\.yml$/,
  /^bitbucket-pipelines\.yml$/,
];

const WORKSPACE_FILES = new Set([
  'pnpm-workspace.yaml',
  'lerna.json',
  'nx.json',
  'turbo.json',
  'go.work',
  'settings.gradle',
  'settings.gradle.kts',
]);

/** Build files whose presence at the root says which build system the repository uses. */
const ROOT_BUILD_FILES = new Set([
  'package.json',
  'go.mod',
  'Cargo.toml',
  'pyproject.toml',
  'setup.py',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
]);

const MANIFESTS = new Set([
  ...ROOT_BUILD_FILES,
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lock',
  'bun.lockb',
  'go.sum',
  'Cargo.lock',
  'poetry.lock',
  'uv.lock',
  'setup.cfg',
  'tox.ini',
  'libs.versions.toml',
  'Dockerfile',
  'docker-compose.yml',
  'compose.yaml',
]);

const REASONS_FILES = 3;

export function contextImpact(changes: readonly ChangedFile[], baseTopLevel: readonly string[]): ContextImpact {
  const major: string[] = [];
  const targeted: string[] = [];
  const name = (p: string) => p.split('/').pop() ?? p;
  const named = (label: string, files: string[]) =>
    files.length ? [`${label}: ${files.slice(0, REASONS_FILES).join(', ')}${more(files)}`] : [];

  major.push(
    ...named(
      'CI configuration changed',
      changes.filter((c) => CI_FILES.some((re) => re.test(c.path))).map((c) => c.path),
    ),
  );
  // Root package.json's `workspaces` and Cargo's `[workspace]` change inside a manifest: the manifest rule sees them.
  major.push(
    ...named(
      'workspace layout changed',
      changes.filter((c) => WORKSPACE_FILES.has(name(c.path))).map((c) => c.path),
    ),
  );
  major.push(
    ...named(
      'build system added or removed',
      changes
        .filter((c) => c.status !== 'M' && !c.path.includes('/') && ROOT_BUILD_FILES.has(c.path))
        .map((c) => `${c.path} (${c.status === 'D' ? 'removed' : 'added'})`),
    ),
  );

  targeted.push(
    ...named(
      'manifests or lockfiles changed',
      changes.filter((c) => MANIFESTS.has(name(c.path))).map((c) => c.path),
    ),
  );
  const existing = new Set(baseTopLevel);
  const newModules = [
    ...new Set(
      changes
        .filter((c) => c.status === 'A' && c.path.includes('/'))
        .map((c) => c.path.split('/')[0]!)
        .filter((top) => !existing.has(top) && !top.startsWith('.')),
    ),
  ];
  targeted.push(
    ...named(
      'new top-level module',
      newModules.map((m) => `${m}/`),
    ),
  );
  targeted.push(
    ...named(
      'the loop configuration changed',
      changes.filter((c) => c.path.startsWith('.ai-engineering-loop/')).map((c) => c.path),
    ),
  );

  if (major.length) return { level: 'MAJOR', reasons: [...major, ...targeted] };
  if (targeted.length) return { level: 'TARGETED', reasons: targeted };
  return { level: 'NONE', reasons: [] };
}

function more(files: string[]): string {
  return files.length > REASONS_FILES ? `, … and ${files.length - REASONS_FILES} more` : '';
}
