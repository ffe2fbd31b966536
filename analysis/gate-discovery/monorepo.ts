import { cargoMembers, type CargoFacts } from './cargo-manifest';
import type { GoFacts } from './go-manifest';
import type { NodeFacts } from './node-manifest';
import { isRecord } from './util';
import type { WorkspaceFiles } from './workspace-files';

// Whether the repository really declares several packages. A marker file is not enough: a
// pnpm-workspace.yaml may hold only settings, an nx.json or turbo.json configure a single project,
// a go.work may use one module, and a Cargo `[workspace]` may have no members.

export async function monorepoEvidence(
  files: WorkspaceFiles,
  facts: { node?: NodeFacts; cargo?: CargoFacts; go?: GoFacts; pnpmPatterns: string[] | undefined },
): Promise<string | undefined> {
  const { node, cargo, go, pnpmPatterns } = facts;
  if (node?.pkg.workspaces?.length) return 'package.json workspaces';
  if (pnpmPatterns?.some((p) => !p.startsWith('!'))) return 'pnpm-workspace.yaml packages';
  if (pnpmPatterns) files.notes.push('pnpm-workspace.yaml lists no packages (settings only); not a monorepo');
  const lerna = await lernaPackages(files);
  if (lerna) return lerna;
  if ((await files.isFile('nx.json')) && (await nxProject(files)))
    return `nx.json with projects (${await nxProject(files)})`;
  const modules = go?.workModules?.length ?? 0;
  if (modules > 1) return `go.work uses ${modules} modules`;
  const members = cargoMembers(cargo);
  if (members.length) return 'Cargo.toml [workspace] members';
  return undefined;
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
