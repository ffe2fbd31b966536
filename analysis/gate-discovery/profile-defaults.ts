import { GATE_ORDER, type ProjectProfile } from '../../domain/gates';
import type { Layer, Proposal } from './layer';
import { isNpmPlaceholderTest, scriptFor, type NodeFacts, type PackageManager } from './node-manifest';
import type { NodeWorkspaces } from './npm-workspaces';
import type { RepoFacts } from './repo-facts';

// Layer 3: profile defaults. Deliberately few, each filling a gap the manifests leave and each only
// when it cannot pass vacuously (a gate that checks nothing must stay NOT_CONFIGURED, never PASSED).

export function profileDefaults(profile: ProjectProfile | null, repo: RepoFacts, notes: string[]): Layer {
  const layer: Layer = {};
  const node = repo.node;
  if (!profile || !node) return layer;
  if (profile === 'monorepo') return workspaceDefaults(node, repo.nodeWorkspaces, notes);
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
 * monorepo whose package manager declares workspaces, and no root script for a gate: that script runs in
 * every workspace that has it, each in its own directory, from one command at the root (set-up installed
 * them all there). Only when at least one workspace defines it: a command that skips workspaces without
 * the script would otherwise pass on nothing. Every workspace runs, not only those a change touches: the
 * plan is fixed at the base commit, before any change, and a change to one package can break the packages
 * that depend on it (docs/verification-config.md, "Monorepos").
 */
function workspaceDefaults(node: NodeFacts, workspaces: NodeWorkspaces | undefined, notes: string[]): Layer {
  const layer: Layer = {};
  if (!workspaces) {
    if (node.pm === 'pnpm' && node.pkg.workspaces?.length) {
      notes.push("package.json workspaces are not pnpm's: pnpm reads its workspaces from pnpm-workspace.yaml");
    }
    return layer;
  }
  const { members } = workspaces;
  const runner = workspaceRunner(node, notes);
  if (!runner) return layer;
  for (const gate of GATE_ORDER) {
    if (scriptFor(gate, node.pkg)) continue;
    const having = members.filter((m) => scriptFor(gate, m.pkg));
    const script = having[0] && scriptFor(gate, having[0].pkg);
    if (!script) continue;
    if (!runner.skipsMissing && having.length < members.length) {
      const missing = members.filter((m) => !having.includes(m)).map((m) => m.dir);
      notes.push(
        `${gate}: ${runner.name} fails in a workspace without scripts.${script} (${missing.join(', ')}); set ${gate} in verification.json`,
      );
      continue;
    }
    const placeholders = members.filter((m) => gate === 'tests' && isNpmPlaceholderTest(m.pkg.scripts.test));
    if (placeholders.length) {
      notes.push(
        `tests: npm's placeholder test script in ${placeholders.map((m) => m.dir).join(', ')} will fail the workspace run`,
      );
    }
    layer[gate] = {
      argv: runner.argv(script),
      detail: `monorepo profile default: ${runner.name} (${workspaces.declaredIn}), scripts.${script} in ${having.length} of ${members.length} workspaces (${having.map((m) => m.dir).join(', ')})`,
    };
  }
  return layer;
}

interface WorkspaceRunner {
  name: string;
  argv: (script: string) => string[];
  /** Whether a workspace without the script is skipped (else the run fails there). */
  skipsMissing: boolean;
}

/** How the package manager runs a script in every workspace; undefined (with a note) when it cannot. */
function workspaceRunner(node: NodeFacts, notes: string[]): WorkspaceRunner | undefined {
  switch (node.pm) {
    case 'npm':
      return {
        name: 'npm workspaces',
        argv: (script) =>
          script === 'test'
            ? ['npm', 'test', '--workspaces', '--if-present']
            : ['npm', 'run', script, '--workspaces', '--if-present'],
        skipsMissing: true,
      };
    case 'pnpm':
      // pnpm -r run: every workspace project but the root, dependencies first; a project without the
      // script is skipped, and the command fails when none has it (pnpm.io/cli/run, /cli/recursive).
      // --no-bail: the projects after a failing one still run, so every failure is reported at once.
      return { name: 'pnpm -r', argv: (script) => ['pnpm', '-r', '--no-bail', 'run', script], skipsMissing: true };
    case 'yarn': {
      const berry = yarnBerry(node);
      if (!berry) {
        // Yarn 1: `yarn workspaces run` runs the script in every workspace, and fails in one without it.
        return {
          name: 'yarn workspaces run',
          argv: (script) => ['yarn', 'workspaces', 'run', script],
          skipsMissing: false,
        };
      }
      if (berry.major !== undefined && berry.major < 4 && !/plugin-workspace-tools/.test(node.yarnrc ?? '')) {
        notes.push(
          `yarn ${berry.major} runs scripts across workspaces only with the workspace-tools plugin, which .yarnrc.yml does not list; no workspace defaults`,
        );
        return undefined;
      }
      // --all: every workspace, the root included (it has no such script, or this default would not
      // apply); `foreach run` skips a workspace without the script (yarnpkg.com/cli/workspaces/foreach).
      return {
        name: 'yarn workspaces foreach',
        argv: (script) => ['yarn', 'workspaces', 'foreach', '--all', 'run', script],
        skipsMissing: true,
      };
    }
    case 'bun':
      notes.push('bun workspaces get no default; set the gates in verification.json');
      return undefined;
  }
}

/** Yarn 2+ (berry) and its major version where known: `packageManager`, else .yarnrc.yml's `yarnPath` release. */
function yarnBerry(node: NodeFacts): { major: number | undefined } | undefined {
  const declared = /^yarn@(\d+)/.exec(node.pkg.packageManager ?? '');
  if (declared) return Number(declared[1]) >= 2 ? { major: Number(declared[1]) } : undefined;
  if (node.yarnrc === undefined) return undefined;
  const release = /^\s*yarnPath:.*yarn-(\d+)\.[^/]*$/m.exec(node.yarnrc);
  return { major: release ? Number(release[1]) : undefined };
}
