import { GATE_ORDER, type ProjectProfile } from '../../domain/gates';
import type { Layer, Proposal } from './layer';
import { isNpmPlaceholderTest, scriptFor, type NodeFacts, type PackageManager } from './node-manifest';
import type { Member } from './npm-workspaces';
import type { RepoFacts } from './repo-facts';

// Layer 3: profile defaults. Deliberately few, each filling a gap the manifests leave and each only
// when it cannot pass vacuously (a gate that checks nothing must stay NOT_CONFIGURED, never PASSED).

export function profileDefaults(profile: ProjectProfile | null, repo: RepoFacts, notes: string[]): Layer {
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
      notes.push(
        `tests: npm's placeholder test script in ${placeholders.map((m) => m.dir).join(', ')} will fail the workspace run`,
      );
    }
    layer[gate] = {
      argv:
        script === 'test'
          ? ['npm', 'test', '--workspaces', '--if-present']
          : ['npm', 'run', script, '--workspaces', '--if-present'],
      detail: `monorepo profile default: npm workspaces, scripts.${script} in ${having.length} of ${members.length} workspaces (${having.map((m) => m.dir).join(', ')})`,
    };
  }
  return layer;
}
