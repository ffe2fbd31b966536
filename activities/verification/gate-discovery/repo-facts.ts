import { readCargoFacts, type CargoFacts } from './cargo-manifest';
import { readGoFacts, type GoFacts } from './go-manifest';
import { readNodeFacts, type NodeFacts } from './node-manifest';
import { readWorkspaceMembers, type Member } from './npm-workspaces';
import { readPythonFacts, type PythonFacts } from './python-manifest';
import { asyncFilter } from './util';
import type { WorkspaceFiles } from './workspace-files';

// Facts about the repository, read once and shared by profile detection, defaults and inference.

export interface RepoFacts {
  node?: NodeFacts;
  go?: GoFacts;
  cargo?: CargoFacts;
  python?: PythonFacts;
  /** npm/yarn workspace members matched by package.json `workspaces`. */
  npmMembers: Member[];
  /** Standalone monorepo marker files present at the root. */
  monorepoFiles: string[];
}

export async function readRepoFacts(files: WorkspaceFiles): Promise<RepoFacts> {
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
