import { minimatch } from 'minimatch';
import { readPackageJson, type PackageJson } from './node-manifest';
import type { WorkspaceFiles } from './workspace-files';

// npm workspace members, for the monorepo default.

export interface Member {
  dir: string;
  pkg: PackageJson;
}

export async function readWorkspaceMembers(files: WorkspaceFiles, patterns: string[]): Promise<Member[]> {
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
