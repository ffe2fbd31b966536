import { GATE_ORDER, type GateName } from '../../domain/gates';
import type { Layer } from './layer';
import { asyncFilter, isRecord } from './util';
import type { WorkspaceFiles } from './workspace-files';

// package.json: what it declares, which package manager runs it, and the gates its scripts define.

export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

export interface PackageJson {
  scripts: Record<string, string>;
  dependencies: Set<string>;
  workspaces: string[] | null;
  packageManager?: string;
}

export interface NodeFacts {
  pkg: PackageJson;
  pm: PackageManager;
  /** Why this package manager, e.g. `pnpm-lock.yaml`. */
  pmEvidence: string;
  tsconfig: string | undefined;
  /** `.yarnrc.yml` (yarn berry's settings), read for yarn only. */
  yarnrc?: string;
}

export async function readPackageJson(files: WorkspaceFiles, rel: string): Promise<PackageJson | undefined> {
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

export async function readNodeFacts(files: WorkspaceFiles): Promise<NodeFacts | undefined> {
  const facts = await packageManagerFacts(files);
  if (facts?.pm !== 'yarn') return facts;
  const yarnrc = await files.manifest('.yarnrc.yml');
  return yarnrc === undefined ? facts : { ...facts, yarnrc };
}

async function packageManagerFacts(files: WorkspaceFiles): Promise<NodeFacts | undefined> {
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

// Script names that count as each gate, most conventional first.
const GATE_SCRIPTS: Record<GateName, readonly string[]> = {
  tests: ['test'],
  typecheck: ['typecheck', 'type-check', 'check-types', 'types:check'],
  lint: ['lint'],
  build: ['build'],
};

/** `npm init` writes a test script that only fails; it is not a test suite. */
export function isNpmPlaceholderTest(script: string | undefined): boolean {
  return script !== undefined && /no test specified/i.test(script);
}

export function scriptFor(gate: GateName, pkg: PackageJson): string | undefined {
  return GATE_SCRIPTS[gate].find(
    (name) => pkg.scripts[name] !== undefined && !(name === 'test' && isNpmPlaceholderTest(pkg.scripts[name])),
  );
}

function runScriptArgv(pm: PackageManager, script: string): string[] {
  // `bun test` is bun's own test runner, not the package's test script.
  return script === 'test' && pm !== 'bun' ? [pm, 'test'] : [pm, 'run', script];
}

export function nodeInference(node: NodeFacts, notes: string[]): Layer {
  const layer: Layer = {};
  if (isNpmPlaceholderTest(node.pkg.scripts.test)) {
    notes.push(`package.json scripts.test is npm's "no test specified" placeholder; not a test gate`);
  }
  for (const gate of GATE_ORDER) {
    const script = scriptFor(gate, node.pkg);
    if (!script) continue;
    layer[gate] = {
      argv: runScriptArgv(node.pm, script),
      detail: `package.json scripts.${script}, run with ${node.pm} (${node.pmEvidence})`,
    };
  }
  return layer;
}
