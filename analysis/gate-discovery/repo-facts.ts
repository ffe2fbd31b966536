import { readCargoFacts, type CargoFacts } from './cargo-manifest';
import { readGoFacts, type GoFacts } from './go-manifest';
import { readJvmFacts, type JvmFacts } from './jvm-manifest';
import { monorepoEvidence } from './monorepo';
import { readNodeFacts, type NodeFacts } from './node-manifest';
import { readWorkspaceMembers, type Member } from './npm-workspaces';
import { readPythonFacts, type PythonFacts } from './python-manifest';
import type { WorkspaceFiles } from './workspace-files';

// Facts about the repository, read once and shared by profile detection, defaults and inference.

export interface RepoFacts {
  node?: NodeFacts;
  go?: GoFacts;
  cargo?: CargoFacts;
  python?: PythonFacts;
  jvm?: JvmFacts;
  /** npm/yarn workspace members matched by package.json `workspaces`. */
  npmMembers: Member[];
  /** Why this is a monorepo (workspaces really declared), or undefined. */
  monorepo: string | undefined;
}

export async function readRepoFacts(files: WorkspaceFiles): Promise<RepoFacts> {
  const node = await readNodeFacts(files);
  const cargo = await readCargoFacts(files);
  return {
    node,
    npmMembers: node?.pkg.workspaces ? await readWorkspaceMembers(files, node.pkg.workspaces) : [],
    go: await readGoFacts(files),
    cargo,
    python: await readPythonFacts(files),
    jvm: await readJvmFacts(files),
    monorepo: await monorepoEvidence(files, node, cargo),
  };
}
