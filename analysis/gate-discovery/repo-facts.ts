import { readCargoFacts, type CargoFacts } from './cargo-manifest';
import { readGoFacts, type GoFacts } from './go-manifest';
import { readJvmFacts, type JvmFacts } from './jvm-manifest';
import { monorepoEvidence } from './monorepo';
import { readNodeFacts, type NodeFacts } from './node-manifest';
import { readNodeWorkspaces, readPnpmWorkspacePatterns, type NodeWorkspaces } from './npm-workspaces';
import { readPythonFacts, type PythonFacts } from './python-manifest';
import type { WorkspaceFiles } from './workspace-files';

// Facts about the repository, read once and shared by profile detection, defaults and inference.

export interface RepoFacts {
  node?: NodeFacts;
  go?: GoFacts;
  cargo?: CargoFacts;
  python?: PythonFacts;
  jvm?: JvmFacts;
  /** The members of the package manager's workspaces (package.json `workspaces`; pnpm-workspace.yaml for pnpm). */
  nodeWorkspaces: NodeWorkspaces | undefined;
  /** Why this is a monorepo (workspaces really declared), or undefined. */
  monorepo: string | undefined;
}

export async function readRepoFacts(files: WorkspaceFiles): Promise<RepoFacts> {
  const node = await readNodeFacts(files);
  const cargo = await readCargoFacts(files);
  const go = await readGoFacts(files);
  const pnpmPatterns = await readPnpmWorkspacePatterns(files);
  return {
    node,
    nodeWorkspaces: await readNodeWorkspaces(files, node, pnpmPatterns),
    go,
    cargo,
    python: await readPythonFacts(files),
    jvm: await readJvmFacts(files),
    monorepo: await monorepoEvidence(files, { node, cargo, go, pnpmPatterns }),
  };
}
