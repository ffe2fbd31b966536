import { matchesGlob } from '../../domain/glob-match';
import { parse as parseYaml } from 'yaml';
import { readPackageJson, type NodeFacts, type PackageJson } from './node-manifest';
import { isRecord } from './util';
import type { WorkspaceFiles } from './workspace-files';

// Node workspace members, for the monorepo defaults: npm and yarn declare them in package.json
// `workspaces`, pnpm in pnpm-workspace.yaml `packages` (pnpm ignores package.json `workspaces`).

export interface Member {
  dir: string;
  pkg: PackageJson;
}

export interface NodeWorkspaces {
  /** Where the members are declared. */
  declaredIn: 'package.json workspaces' | 'pnpm-workspace.yaml packages';
  members: Member[];
}

/** The members of the package manager's own workspace declaration; undefined when it declares none. */
export async function readNodeWorkspaces(
  files: WorkspaceFiles,
  node: NodeFacts | undefined,
  pnpmPatterns: string[] | undefined,
): Promise<NodeWorkspaces | undefined> {
  if (!node) return undefined;
  if (node.pm === 'pnpm') {
    if (!pnpmPatterns?.length) return undefined;
    return { declaredIn: 'pnpm-workspace.yaml packages', members: await readWorkspaceMembers(files, pnpmPatterns) };
  }
  if (!node.pkg.workspaces?.length) return undefined;
  return { declaredIn: 'package.json workspaces', members: await readWorkspaceMembers(files, node.pkg.workspaces) };
}

/**
 * Every pattern of pnpm-workspace.yaml's `packages` (`!` exclusions included); [] when it has none or is
 * not YAML (with a note); undefined when there is no such file.
 */
export async function readPnpmWorkspacePatterns(files: WorkspaceFiles): Promise<string[] | undefined> {
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
  return Array.isArray(packages) ? packages.filter((p): p is string => typeof p === 'string') : [];
}

export async function readWorkspaceMembers(files: WorkspaceFiles, patterns: string[]): Promise<Member[]> {
  const include = patterns.filter((p) => !p.startsWith('!')).map(stripSlashes);
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => stripSlashes(p.slice(1)));
  if (!include.length) return [];
  // Deep enough for every pattern; `**` is bounded so a large repository cannot stall discovery.
  const depth = Math.max(...include.map((p) => (p.includes('**') ? 6 : p.split('/').length)));
  const members: Member[] = [];
  for (const dir of await files.directories(depth)) {
    if (!include.some((p) => matchesGlob(dir, p)) || exclude.some((p) => matchesGlob(dir, p))) continue;
    if (!(await files.isFile(`${dir}/package.json`))) continue;
    const pkg = await readPackageJson(files, `${dir}/package.json`);
    if (pkg) members.push({ dir, pkg });
  }
  return members;
}

function stripSlashes(pattern: string): string {
  return pattern.replace(/^\.\//, '').replace(/\/+$/, '');
}
