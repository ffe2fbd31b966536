import { parse as parseYaml } from 'yaml';
import { cargoMembers, type CargoFacts } from './cargo-manifest';
import type { NodeFacts } from './node-manifest';
import { isRecord } from './util';
import type { WorkspaceFiles } from './workspace-files';

// Whether the repository really declares several packages. A marker file is not enough: a
// pnpm-workspace.yaml may hold only settings, an nx.json or turbo.json configure a single project,
// a go.work may use one module, and a Cargo `[workspace]` may have no members.

export async function monorepoEvidence(
  files: WorkspaceFiles,
  node: NodeFacts | undefined,
  cargo: CargoFacts | undefined,
): Promise<string | undefined> {
  if (node?.pkg.workspaces?.length) return 'package.json workspaces';
  const pnpm = await pnpmWorkspacePackages(files);
  if (pnpm?.length) return 'pnpm-workspace.yaml packages';
  if (pnpm) files.notes.push('pnpm-workspace.yaml lists no packages (settings only); not a monorepo');
  const lerna = await lernaPackages(files);
  if (lerna) return lerna;
  if ((await files.isFile('nx.json')) && (await nxProject(files)))
    return `nx.json with projects (${await nxProject(files)})`;
  const modules = await goWorkModules(files);
  if (modules.length > 1) return `go.work uses ${modules.length} modules`;
  const members = cargoMembers(cargo);
  if (members.length) return 'Cargo.toml [workspace] members';
  return undefined;
}

/** The `packages` globs of pnpm-workspace.yaml; [] when it has none; undefined when there is no such file. */
async function pnpmWorkspacePackages(files: WorkspaceFiles): Promise<string[] | undefined> {
  const text = await files.manifest('pnpm-workspace.yaml');
  if (text === undefined) return undefined;
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    files.notes.push(`pnpm-workspace.yaml is not valid YAML (${(error as Error).message.split('\n')[0]}); ignored`);
    return [];
  }
  const packages = isRecord(doc) ? doc.packages : undefined;
  return Array.isArray(packages)
    ? packages.filter((p): p is string => typeof p === 'string' && !p.startsWith('!'))
    : [];
}

/** lerna.json with `packages`, or without them lerna's default `packages/*` holding a package. */
async function lernaPackages(files: WorkspaceFiles): Promise<string | undefined> {
  const text = await files.manifest('lerna.json');
  if (text === undefined) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    files.notes.push('lerna.json is not valid JSON; ignored');
    return undefined;
  }
  const packages = isRecord(doc) && Array.isArray(doc.packages) ? doc.packages : undefined;
  if (packages?.length) return 'lerna.json packages';
  if (!packages && (await files.findFile('packages', /^package\.json$/, 2))) return 'lerna.json with packages/*';
  return undefined;
}

/** An Nx project below the root (`project.json` in apps/, libs/ or packages/). */
async function nxProject(files: WorkspaceFiles): Promise<string | undefined> {
  for (const dir of ['apps', 'libs', 'packages']) {
    const found = await files.findFile(dir, /^project\.json$/, 3);
    if (found) return found;
  }
  return undefined;
}

/** Module directories a go.work `use`s, in both the single-line and the block form. */
async function goWorkModules(files: WorkspaceFiles): Promise<string[]> {
  const text = await files.manifest('go.work');
  if (text === undefined) return [];
  const modules: string[] = [];
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (inBlock) {
      if (line === ')') inBlock = false;
      else if (line) modules.push(line);
    } else if (/^use\s*\($/.test(line)) inBlock = true;
    else if (/^use\s+\S/.test(line)) modules.push(line.replace(/^use\s+/, ''));
  }
  return modules;
}
