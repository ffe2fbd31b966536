import fs from 'node:fs/promises';
import path from 'node:path';
import { minimatch } from 'minimatch';
import {
  GATE_ORDER,
  GATE_SOURCES,
  MAX_COMMAND_TIMEOUT_SECONDS,
  type GateCommand,
  type GateName,
  type GatePlan,
  type GateSource,
  type ProjectProfile,
  type ResolvedGate,
} from '../../domain/gates';
import {
  DEFAULT_GATE_TIMEOUT_SECONDS,
  parseVerificationConfig,
  VERIFICATION_CONFIG_PATH,
  VerificationConfigError,
  type VerificationConfig,
} from '../../domain/verification-config';

// Gate discovery (SPEC §3.2, docs/verification-config.md): each gate's command comes from the most
// specific layer that defines it — task contract → repository config → profile defaults → manifest
// inference. Each layer is computed on its own from the workspace; resolution only picks by precedence.
// A gate no layer defines is left out, and the verifier records it as NOT_CONFIGURED.

export interface GateDiscoveryInput {
  workspace: string;
  contractGates: GateCommand[];
}

/** What one layer proposes for a gate, before precedence and ceilings. */
interface Proposal {
  argv: string[];
  timeoutSeconds?: number;
  detail: string;
  junitReport?: string;
}
type Layer = Partial<Record<GateName, Proposal>>;

export async function discoverGates(input: GateDiscoveryInput): Promise<GatePlan> {
  const notes: string[] = [];
  const files = new WorkspaceFiles(await fs.realpath(input.workspace), notes);
  const config = await readVerificationConfig(files);
  const repo = await readRepoFacts(files);
  const detected = detectProfile(repo);
  const profile = config?.profile ?? detected?.profile ?? null;
  if (config?.profile) notes.push(`profile ${config.profile} set by ${VERIFICATION_CONFIG_PATH}`);
  else if (detected) notes.push(`profile ${detected.profile} detected: ${detected.evidence}`);

  const layers: Record<GateSource, Layer> = {
    contract: contractLayer(input.contractGates),
    'repository-config': repositoryConfigLayer(config),
    'profile-default': profileDefaults(profile, repo, notes),
    'manifest-inference': manifestInference(repo, notes),
  };
  return { gates: resolveByPrecedence(layers, notes), profile, notes };
}

function resolveByPrecedence(layers: Record<GateSource, Layer>, notes: string[]): ResolvedGate[] {
  const gates: ResolvedGate[] = [];
  for (const gate of GATE_ORDER) {
    const source = GATE_SOURCES.find((s) => layers[s][gate]);
    if (!source) continue;
    const proposal = layers[source][gate]!;
    const requested = proposal.timeoutSeconds ?? DEFAULT_GATE_TIMEOUT_SECONDS;
    // The ceiling is global (SPEC §3.2): clamp rather than fail, and say so.
    const timeoutSeconds = Math.min(requested, MAX_COMMAND_TIMEOUT_SECONDS);
    if (timeoutSeconds < requested) {
      notes.push(`${gate}: timeout ${requested}s from ${source} clamped to the ${MAX_COMMAND_TIMEOUT_SECONDS}s ceiling`);
    }
    gates.push({
      gate,
      argv: proposal.argv,
      timeoutSeconds,
      source,
      detail: proposal.detail,
      ...(proposal.junitReport ? { junitReport: proposal.junitReport } : {}),
    });
  }
  return gates;
}

// ---------------------------------------------------------------------------------------------------
// Layers 1 and 2: explicit commands.

function contractLayer(contractGates: GateCommand[]): Layer {
  const layer: Layer = {};
  for (const g of contractGates) {
    layer[g.gate] ??= { argv: g.argv, timeoutSeconds: g.timeoutSeconds, detail: 'task contract (loop request gates)' };
  }
  return layer;
}

function repositoryConfigLayer(config: VerificationConfig | null): Layer {
  const layer: Layer = {};
  for (const gate of GATE_ORDER) {
    const g = config?.gates[gate];
    if (g) layer[gate] = { ...g, detail: `${VERIFICATION_CONFIG_PATH} gates.${gate}` };
  }
  return layer;
}

async function readVerificationConfig(files: WorkspaceFiles): Promise<VerificationConfig | null> {
  const file = VERIFICATION_CONFIG_PATH;
  const read = await files.read(file);
  switch (read.kind) {
    case 'absent':
      // The spec also allows a verification.md; it is prose for people, so say it was not used.
      if (await files.isFile('.ai-engineering-loop/verification.md')) {
        files.notes.push('.ai-engineering-loop/verification.md is for people and is not read; gates come from verification.json');
      }
      return null;
    case 'outside':
      throw new VerificationConfigError(file, 'resolves outside the workspace (symlink); refusing to read it');
    case 'unreadable':
      throw new VerificationConfigError(file, `cannot be read: ${read.reason}`);
    case 'file':
      break;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(read.text.replace(/^\uFEFF/, '')); // editors on Windows may add a BOM
  } catch (error) {
    throw new VerificationConfigError(file, `is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = parseVerificationConfig(raw);
  if (!parsed.ok) throw VerificationConfigError.fromProblems(file, parsed.problems);
  return parsed.config;
}

// ---------------------------------------------------------------------------------------------------
// Reading the workspace: only regular files whose real path stays inside it.

const MAX_MANIFEST_BYTES = 1024 * 1024;

type FileRead =
  | { kind: 'absent' }
  | { kind: 'outside' }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'file'; text: string };

class WorkspaceFiles {
  constructor(
    readonly root: string,
    readonly notes: string[],
  ) {}

  async read(rel: string): Promise<FileRead> {
    const full = path.join(this.root, rel);
    let real: string;
    try {
      real = await fs.realpath(full);
    } catch {
      // A dangling symlink is there but unusable; only a missing path means absent.
      const there = await fs.lstat(full).then(
        () => true,
        () => false,
      );
      return there ? { kind: 'unreadable', reason: 'a symlink to nothing' } : { kind: 'absent' };
    }
    if (real !== this.root && !real.startsWith(this.root + path.sep)) return { kind: 'outside' };
    const stat = await fs.stat(real);
    if (!stat.isFile()) return { kind: 'unreadable', reason: 'not a regular file' };
    if (stat.size > MAX_MANIFEST_BYTES) return { kind: 'unreadable', reason: `larger than ${MAX_MANIFEST_BYTES} bytes` };
    return { kind: 'file', text: await fs.readFile(real, 'utf8') };
  }

  /** A manifest's text, or undefined; anything odd about it becomes a note, not a failure. */
  async manifest(rel: string): Promise<string | undefined> {
    const read = await this.read(rel);
    if (read.kind === 'outside') this.notes.push(`${rel} resolves outside the workspace; ignored`);
    if (read.kind === 'unreadable') this.notes.push(`${rel} ignored: ${read.reason}`);
    return read.kind === 'file' ? read.text : undefined;
  }

  async isFile(rel: string): Promise<boolean> {
    try {
      const real = await fs.realpath(path.join(this.root, rel));
      if (!real.startsWith(this.root + path.sep)) return false;
      return (await fs.stat(real)).isFile();
    } catch {
      return false;
    }
  }

  async firstFile(candidates: readonly string[]): Promise<string | undefined> {
    for (const rel of candidates) if (await this.isFile(rel)) return rel;
    return undefined;
  }

  /** Real directories (not symlinks) up to maxDepth below the root, skipping dependencies and dot dirs. */
  async directories(maxDepth: number): Promise<string[]> {
    const found: string[] = [];
    let level = [''];
    for (let depth = 1; depth <= maxDepth && found.length < 2000; depth++) {
      const next: string[] = [];
      for (const dir of level) {
        const entries = await fs.readdir(path.join(this.root, dir), { withFileTypes: true }).catch(() => []);
        for (const e of entries) {
          if (!e.isDirectory() || e.name === 'node_modules' || e.name.startsWith('.')) continue;
          next.push(dir ? `${dir}/${e.name}` : e.name);
        }
      }
      found.push(...next);
      level = next;
    }
    return found;
  }
}

// ---------------------------------------------------------------------------------------------------
// Facts about the repository, read once and shared by profile detection, defaults and inference.

type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

interface PackageJson {
  scripts: Record<string, string>;
  dependencies: Set<string>;
  workspaces: string[] | null;
  packageManager?: string;
}

interface NodeFacts {
  pkg: PackageJson;
  pm: PackageManager;
  /** Why this package manager, e.g. `pnpm-lock.yaml`. */
  pmEvidence: string;
  tsconfig: string | undefined;
}

interface GoFacts {
  mod: string;
  golangciConfig: string | undefined;
}

interface CargoFacts {
  tables: Map<string, string>;
  clippyConfig: string | undefined;
}

interface PythonFacts {
  tables: Map<string, string>;
  dependencies: Set<string>;
  /** How tools are run: through the lockfile's project manager, else `python3 -m`. */
  runner: { prefix: string[]; evidence: string };
  pytestIni: boolean;
  ruffConfig: string | undefined;
}

interface RepoFacts {
  node?: NodeFacts;
  go?: GoFacts;
  cargo?: CargoFacts;
  python?: PythonFacts;
  /** npm/yarn workspace members matched by package.json `workspaces`. */
  npmMembers: Member[];
  /** Standalone monorepo marker files present at the root. */
  monorepoFiles: string[];
}

async function readRepoFacts(files: WorkspaceFiles): Promise<RepoFacts> {
  const node = await readNodeFacts(files);
  return {
    node,
    npmMembers: node?.pkg.workspaces ? await readWorkspaceMembers(files, node.pkg.workspaces) : [],
    go: await readGoFacts(files),
    cargo: await readCargoFacts(files),
    python: await readPythonFacts(files),
    monorepoFiles: await asyncFilter(['pnpm-workspace.yaml', 'lerna.json', 'nx.json', 'turbo.json', 'go.work'], (f) =>
      files.isFile(f),
    ),
  };
}

async function readPackageJson(files: WorkspaceFiles, rel: string): Promise<PackageJson | undefined> {
  const text = await files.manifest(rel);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    files.notes.push(`${rel} is not valid JSON; ignored`);
    return undefined;
  }
  if (!isRecord(raw)) return undefined;
  const scripts = Object.fromEntries(
    Object.entries(isRecord(raw.scripts) ? raw.scripts : {}).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && e[1].trim() !== '',
    ),
  );
  const dependencies = new Set<string>();
  for (const field of ['dependencies', 'devDependencies']) {
    const deps = raw[field];
    if (isRecord(deps)) Object.keys(deps).forEach((d) => dependencies.add(d));
  }
  // `workspaces` is an array of globs, or (yarn) an object with a `packages` array.
  const ws = Array.isArray(raw.workspaces) ? raw.workspaces : isRecord(raw.workspaces) ? raw.workspaces.packages : null;
  const workspaces = Array.isArray(ws) ? ws.filter((w): w is string => typeof w === 'string') : null;
  const packageManager = typeof raw.packageManager === 'string' ? raw.packageManager : undefined;
  return { scripts, dependencies, workspaces, ...(packageManager ? { packageManager } : {}) };
}

// When several lockfiles exist the more deliberate choice wins: an npm lockfile is often created by accident.
const LOCKFILES: ReadonlyArray<readonly [string, PackageManager]> = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
];

async function readNodeFacts(files: WorkspaceFiles): Promise<NodeFacts | undefined> {
  const pkg = await readPackageJson(files, 'package.json');
  if (!pkg) return undefined;
  const tsconfig = await files.manifest('tsconfig.json');
  // Corepack's `packageManager` field is an explicit statement, so it beats lockfile guessing.
  const declared = pkg.packageManager?.split('@')[0];
  if (declared === 'npm' || declared === 'pnpm' || declared === 'yarn' || declared === 'bun') {
    return { pkg, pm: declared, pmEvidence: `packageManager ${pkg.packageManager}`, tsconfig };
  }
  const present = await asyncFilter(LOCKFILES, ([file]) => files.isFile(file));
  const [first] = present;
  if (!first) return { pkg, pm: 'npm', pmEvidence: 'no lockfile, npm by default', tsconfig };
  if (new Set(present.map(([, pm]) => pm)).size > 1) {
    files.notes.push(`several lockfiles (${present.map(([f]) => f).join(', ')}); using ${first[1]} from ${first[0]}`);
  }
  return { pkg, pm: first[1], pmEvidence: first[0], tsconfig };
}

async function readGoFacts(files: WorkspaceFiles): Promise<GoFacts | undefined> {
  const mod = await files.manifest('go.mod');
  if (mod === undefined) return undefined;
  const golangciConfig = await files.firstFile(['.golangci.yml', '.golangci.yaml', '.golangci.toml', '.golangci.json']);
  return { mod, golangciConfig };
}

async function readCargoFacts(files: WorkspaceFiles): Promise<CargoFacts | undefined> {
  const text = await files.manifest('Cargo.toml');
  if (text === undefined) return undefined;
  return { tables: tomlTables(text), clippyConfig: await files.firstFile(['clippy.toml', '.clippy.toml']) };
}

async function readPythonFacts(files: WorkspaceFiles): Promise<PythonFacts | undefined> {
  const text = await files.manifest('pyproject.toml');
  if (text === undefined) return undefined;
  const tables = tomlTables(text);
  const lock = await files.firstFile(['uv.lock', 'poetry.lock', 'pdm.lock']);
  const runner = lock
    ? { prefix: [lock.split('.')[0]!, 'run'], evidence: lock }
    : // python3, not python: many images ship only python3 without the `python` alias.
      { prefix: ['python3', '-m'], evidence: 'no lockfile, python3 -m' };
  return {
    tables,
    dependencies: pythonDependencies(tables),
    runner,
    pytestIni: await files.isFile('pytest.ini'),
    ruffConfig: await files.firstFile(['ruff.toml', '.ruff.toml']),
  };
}

// ---------------------------------------------------------------------------------------------------
// Profile detection: the first profile whose evidence is present, in this order.

const WEB_APP_PACKAGES = ['react', 'vue', 'svelte', 'next', 'nuxt', 'vite', '@angular/core', '@sveltejs/kit', 'solid-js'];
const BACKEND_PACKAGES = ['express', 'fastify', 'koa', '@nestjs/core', '@hapi/hapi', 'hapi'];
const GO_HTTP_MODULES = [
  'github.com/gin-gonic/gin',
  'github.com/labstack/echo',
  'github.com/gofiber/fiber',
  'github.com/go-chi/chi',
  'github.com/gorilla/mux',
];
const PYTHON_WEB_PACKAGES = ['fastapi', 'flask', 'django'];
const RUST_HTTP_CRATES = ['axum', 'actix-web', 'rocket', 'warp'];

function detectProfile(repo: RepoFacts): { profile: ProjectProfile; evidence: string } | null {
  const monorepo = monorepoEvidence(repo);
  if (monorepo) return { profile: 'monorepo', evidence: monorepo };
  const deps = repo.node?.pkg.dependencies;
  const web = WEB_APP_PACKAGES.find((d) => deps?.has(d));
  if (web) return { profile: 'web-app', evidence: `package.json depends on ${web}` };
  const backend =
    pick(BACKEND_PACKAGES, (d) => deps?.has(d), (d) => `package.json depends on ${d}`) ??
    pick(GO_HTTP_MODULES, (m) => repo.go !== undefined && goRequires(repo.go.mod, m), (m) => `go.mod requires ${m}`) ??
    pick(PYTHON_WEB_PACKAGES, (d) => repo.python?.dependencies.has(d), (d) => `pyproject.toml depends on ${d}`) ??
    pick(RUST_HTTP_CRATES, (c) => cargoDependsOn(repo.cargo, c), (c) => `Cargo.toml depends on ${c}`);
  if (backend) return { profile: 'backend-api', evidence: backend };
  const manifest = [repo.node && 'package.json', repo.go && 'go.mod', repo.cargo && 'Cargo.toml', repo.python && 'pyproject.toml'].find(
    Boolean,
  );
  return manifest ? { profile: 'library', evidence: `${manifest} with no app or server framework` } : null;
}

function monorepoEvidence(repo: RepoFacts): string | undefined {
  if (repo.node?.pkg.workspaces) return 'package.json workspaces';
  if (repo.monorepoFiles[0]) return repo.monorepoFiles[0];
  if (repo.cargo?.tables.has('workspace')) return 'Cargo.toml [workspace]';
  return undefined;
}

function goRequires(mod: string, modulePath: string): boolean {
  // Matches `require x v1` and lines inside a `require ( … )` block; a module path may carry a /vN suffix.
  const escaped = modulePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\s*(?:require\\s+)?${escaped}(?:/v\\d+)?\\s+v`, 'm').test(mod);
}

function cargoDependsOn(cargo: CargoFacts | undefined, crate: string): boolean {
  const deps = cargo?.tables.get('dependencies') ?? '';
  return new RegExp(`^\\s*${crate}\\s*=`, 'm').test(deps) || cargo?.tables.has(`dependencies.${crate}`) === true;
}

// ---------------------------------------------------------------------------------------------------
// Layer 3: profile defaults. Deliberately few, each filling a gap the manifests leave and each only
// when it cannot pass vacuously (a gate that checks nothing must stay NOT_CONFIGURED, never PASSED).

function profileDefaults(profile: ProjectProfile | null, repo: RepoFacts, notes: string[]): Layer {
  const layer: Layer = {};
  const node = repo.node;
  if (!profile || !node) return layer;
  if (profile === 'monorepo') return npmWorkspaceDefaults(node, repo.npmMembers, notes);
  const typecheck = typescriptDefault(profile, node, notes);
  if (typecheck) layer.typecheck = typecheck;
  return layer;
}

/** web-app, backend-api, library: a TypeScript project with no typecheck script still gets `tsc --noEmit`. */
function typescriptDefault(profile: ProjectProfile, node: NodeFacts, notes: string[]): Proposal | undefined {
  if (node.tsconfig === undefined || !node.pkg.dependencies.has('typescript')) return undefined;
  if (scriptFor('typecheck', node.pkg)) return undefined;
  // A solution-style tsconfig (`references`, usually `files: []`) makes plain `tsc --noEmit` check nothing.
  if (/"references"\s*:/.test(node.tsconfig)) {
    notes.push('tsconfig.json uses project references, so no tsc --noEmit default; set typecheck in verification.json');
    return undefined;
  }
  return {
    argv: [...execArgv(node.pm), 'tsc', '--noEmit'],
    detail: `${profile} profile default: tsconfig.json and typescript in package.json with no typecheck script, run with ${node.pm} (${node.pmEvidence})`,
  };
}

/** Runs a locally installed binary without ever downloading one. */
function execArgv(pm: PackageManager): string[] {
  switch (pm) {
    case 'npm':
      return ['npx', '--no-install'];
    case 'pnpm':
      return ['pnpm', 'exec'];
    case 'yarn':
      return ['yarn']; // `yarn <bin>` works in yarn 1 and berry; `yarn exec` does not in both
    case 'bun':
      return ['bun', 'run'];
  }
}

/**
 * monorepo with npm workspaces and no root script for a gate: run that script in every workspace that
 * has it. Only when at least one workspace defines it — `--if-present` alone would pass on nothing.
 */
function npmWorkspaceDefaults(node: NodeFacts, members: Member[], notes: string[]): Layer {
  const layer: Layer = {};
  if (node.pm !== 'npm' || !node.pkg.workspaces) return layer;
  for (const gate of GATE_ORDER) {
    if (scriptFor(gate, node.pkg)) continue;
    const having = members.filter((m) => scriptFor(gate, m.pkg));
    const script = having[0] && scriptFor(gate, having[0].pkg);
    if (!script) continue;
    const placeholders = members.filter((m) => gate === 'tests' && isNpmPlaceholderTest(m.pkg.scripts.test));
    if (placeholders.length) {
      notes.push(`tests: npm's placeholder test script in ${placeholders.map((m) => m.dir).join(', ')} will fail the workspace run`);
    }
    layer[gate] = {
      argv: script === 'test' ? ['npm', 'test', '--workspaces', '--if-present'] : ['npm', 'run', script, '--workspaces', '--if-present'],
      detail: `monorepo profile default: npm workspaces, scripts.${script} in ${having.length} of ${members.length} workspaces (${having.map((m) => m.dir).join(', ')})`,
    };
  }
  return layer;
}

// ---------------------------------------------------------------------------------------------------
// Layer 4: inference from manifests. With several manifests the first (in this order) defining a gate
// wins; the others are named in a note so a person can pin the choice in verification.json.

function manifestInference(repo: RepoFacts, notes: string[]): Layer {
  const perManifest: Array<[string, Layer]> = [
    ['package.json', repo.node ? nodeInference(repo.node, notes) : {}],
    ['go.mod', repo.go ? goInference(repo.go) : {}],
    ['Cargo.toml', repo.cargo ? cargoInference(repo.cargo) : {}],
    ['pyproject.toml', repo.python ? pythonInference(repo.python) : {}],
  ];
  const layer: Layer = {};
  for (const gate of GATE_ORDER) {
    const defining = perManifest.filter(([, l]) => l[gate]);
    if (!defining[0]) continue;
    layer[gate] = defining[0][1][gate];
    if (defining.length > 1) {
      notes.push(`${gate}: inferred from ${defining[0][0]}; ${defining.slice(1).map(([m]) => m).join(', ')} would also define it`);
    }
  }
  return layer;
}

// Script names that count as each gate, most conventional first.
const GATE_SCRIPTS: Record<GateName, readonly string[]> = {
  tests: ['test'],
  typecheck: ['typecheck', 'type-check', 'check-types', 'types:check'],
  lint: ['lint'],
  build: ['build'],
};

/** `npm init` writes a test script that only fails; it is not a test suite. */
function isNpmPlaceholderTest(script: string | undefined): boolean {
  return script !== undefined && /no test specified/i.test(script);
}

function scriptFor(gate: GateName, pkg: PackageJson): string | undefined {
  return GATE_SCRIPTS[gate].find((name) => pkg.scripts[name] !== undefined && !(name === 'test' && isNpmPlaceholderTest(pkg.scripts[name])));
}

function runScriptArgv(pm: PackageManager, script: string): string[] {
  // `bun test` is bun's own test runner, not the package's test script.
  return script === 'test' && pm !== 'bun' ? [pm, 'test'] : [pm, 'run', script];
}

function nodeInference(node: NodeFacts, notes: string[]): Layer {
  const layer: Layer = {};
  if (isNpmPlaceholderTest(node.pkg.scripts.test)) {
    notes.push(`package.json scripts.test is npm's "no test specified" placeholder; not a test gate`);
  }
  for (const gate of GATE_ORDER) {
    const script = scriptFor(gate, node.pkg);
    if (script) {
      layer[gate] = {
        argv: runScriptArgv(node.pm, script),
        detail: `package.json scripts.${script}, run with ${node.pm} (${node.pmEvidence})`,
      };
    }
  }
  return layer;
}

function goInference(go: GoFacts): Layer {
  const layer: Layer = {
    tests: { argv: ['go', 'test', './...'], detail: 'go.mod: go test over every package' },
    typecheck: { argv: ['go', 'vet', './...'], detail: 'go.mod: go vet (type-checks and vets every package)' },
    build: { argv: ['go', 'build', './...'], detail: 'go.mod: go build over every package' },
  };
  // golangci-lint is not part of the Go toolchain; its config file says the repository uses it.
  if (go.golangciConfig) layer.lint = { argv: ['golangci-lint', 'run'], detail: `go.mod with ${go.golangciConfig}` };
  return layer;
}

function cargoInference(cargo: CargoFacts): Layer {
  const ws = cargo.tables.has('workspace') ? ['--workspace'] : [];
  const scope = ws.length ? 'Cargo.toml [workspace]: every member' : 'Cargo.toml';
  const layer: Layer = {
    tests: { argv: ['cargo', 'test', ...ws], detail: `${scope}, cargo test` },
    typecheck: { argv: ['cargo', 'check', ...ws], detail: `${scope}, cargo check` },
    build: { argv: ['cargo', 'build', ...ws], detail: `${scope}, cargo build` },
  };
  // Clippy only when the repository configured it: it is an optional rustup component, and code that never
  // ran it often has warnings that `-D warnings` would turn into a failure the change did not cause.
  const clippy = cargo.clippyConfig ?? (clippyLintsTable(cargo.tables) ? 'Cargo.toml [lints.clippy]' : undefined);
  if (clippy) {
    layer.lint = { argv: ['cargo', 'clippy', ...ws, '--', '-D', 'warnings'], detail: `${scope}, clippy configured in ${clippy}` };
  }
  return layer;
}

function clippyLintsTable(tables: Map<string, string>): boolean {
  return ['lints', 'workspace.lints'].some(
    (t) => tables.has(`${t}.clippy`) || /^\s*clippy\s*=/m.test(tables.get(t) ?? ''),
  );
}

function pythonInference(py: PythonFacts): Layer {
  const layer: Layer = {};
  const run = (tool: string, ...args: string[]) => [...py.runner.prefix, tool, ...args];
  const how = `run with ${py.runner.evidence}`;
  const pytest =
    (py.tables.has('tool.pytest.ini_options') && '[tool.pytest.ini_options]') ||
    (py.tables.has('tool.pytest') && '[tool.pytest]') ||
    (py.pytestIni && 'pytest.ini') ||
    (py.dependencies.has('pytest') && 'a pytest dependency');
  if (pytest) layer.tests = { argv: run('pytest'), detail: `pyproject.toml: ${pytest}, ${how}` };

  const mypyTable = py.tables.get('tool.mypy');
  if (mypyTable !== undefined || py.dependencies.has('mypy')) {
    // With `files` configured, plain `mypy` checks exactly those; `mypy .` would override them.
    const args = mypyTable !== undefined && /^\s*files\s*=/m.test(mypyTable) ? [] : ['.'];
    layer.typecheck = {
      argv: run('mypy', ...args),
      detail: `pyproject.toml: ${mypyTable !== undefined ? '[tool.mypy]' : 'a mypy dependency'}, ${how}`,
    };
  }
  const ruff =
    ([...py.tables.keys()].some((t) => t === 'tool.ruff' || t.startsWith('tool.ruff.')) && '[tool.ruff]') ||
    py.ruffConfig ||
    (py.dependencies.has('ruff') && 'a ruff dependency');
  if (ruff) layer.lint = { argv: run('ruff', 'check', '.'), detail: `pyproject.toml: ${ruff}, ${how}` };
  // No build gate: building a wheel needs the `build` package and says little about correctness.
  return layer;
}

// ---------------------------------------------------------------------------------------------------
// npm workspace members, for the monorepo default.

interface Member {
  dir: string;
  pkg: PackageJson;
}

async function readWorkspaceMembers(files: WorkspaceFiles, patterns: string[]): Promise<Member[]> {
  const include = patterns.filter((p) => !p.startsWith('!')).map(stripSlashes);
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => stripSlashes(p.slice(1)));
  if (!include.length) return [];
  // Deep enough for every pattern; `**` is bounded so a large repository cannot stall discovery.
  const depth = Math.max(...include.map((p) => (p.includes('**') ? 6 : p.split('/').length)));
  const members: Member[] = [];
  for (const dir of await files.directories(depth)) {
    if (!include.some((p) => minimatch(dir, p)) || exclude.some((p) => minimatch(dir, p))) continue;
    if (!(await files.isFile(`${dir}/package.json`))) continue;
    const pkg = await readPackageJson(files, `${dir}/package.json`);
    if (pkg) members.push({ dir, pkg });
  }
  return members;
}

function stripSlashes(pattern: string): string {
  return pattern.replace(/^\.\//, '').replace(/\/+$/, '');
}

// ---------------------------------------------------------------------------------------------------
// Just enough TOML for the few tables and keys inference reads; not a TOML parser.

/** Table name → body text (comments removed). Keys before the first header are under ''. */
function tomlTables(text: string): Map<string, string> {
  const tables = new Map<string, string>();
  let current = '';
  const body: string[] = [];
  const flush = () => tables.set(current, [tables.get(current), ...body.splice(0)].filter(Boolean).join('\n'));
  for (const line of text.split(/\r?\n/).map(stripTomlComment)) {
    const header = /^\s*\[{1,2}\s*([^\]]+?)\s*\]{1,2}\s*$/.exec(line);
    if (header) {
      flush();
      current = header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
      tables.set(current, tables.get(current) ?? '');
    } else {
      body.push(line);
    }
  }
  flush();
  return tables;
}

function stripTomlComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

function quotedStrings(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2] ?? '');
}

/** The text of the array assigned to `key` in a table body, brackets in strings (extras) respected. */
function tomlArray(body: string, key: string): string {
  const start = new RegExp(`^\\s*"?${key}"?\\s*=\\s*\\[`, 'm').exec(body);
  if (!start) return '';
  let depth = 0;
  let quote: string | null = null;
  for (let i = start.index + start[0].length - 1; i < body.length; i++) {
    const c = body[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return body.slice(start.index, i + 1);
  }
  return body.slice(start.index);
}

/** Normalised (PEP 503) names of every dependency pyproject.toml declares, in any common layout. */
function pythonDependencies(tables: Map<string, string>): Set<string> {
  const specs: string[] = [];
  specs.push(...quotedStrings(tomlArray(tables.get('project') ?? '', 'dependencies')));
  specs.push(...quotedStrings(tomlArray(tables.get('tool.uv') ?? '', 'dev-dependencies')));
  // PEP 621 extras and PEP 735 groups: every value is a list of requirement strings.
  for (const t of ['project.optional-dependencies', 'dependency-groups']) specs.push(...quotedStrings(tables.get(t) ?? ''));
  // Poetry declares dependencies as keys: `pytest = "^8"`.
  for (const [name, body] of tables) {
    if (/^tool\.poetry\.(dependencies|dev-dependencies|group\.[^.]+\.dependencies)$/.test(name)) {
      specs.push(...[...body.matchAll(/^\s*"?([A-Za-z0-9][A-Za-z0-9._-]*)"?\s*=/gm)].map((m) => m[1]!));
    }
  }
  const names = specs.map((s) => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(s)?.[1]).filter((n): n is string => !!n);
  return new Set(names.map((n) => n.toLowerCase().replace(/[-_.]+/g, '-')));
}

// ---------------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function asyncFilter<T>(items: readonly T[], keep: (item: T) => Promise<boolean>): Promise<T[]> {
  const kept: T[] = [];
  for (const item of items) if (await keep(item)) kept.push(item);
  return kept;
}

function pick<T>(items: readonly T[], has: (item: T) => boolean | undefined, describe: (item: T) => string): string | undefined {
  const found = items.find((item) => has(item));
  return found === undefined ? undefined : describe(found);
}
