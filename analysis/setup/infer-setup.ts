import {
  DEFAULT_SETUP_TIMEOUT_SECONDS,
  type ResolvedSetupCommand,
  type SetupCommand,
  type SetupPlan,
} from '../../domain/setup';
import { VERIFICATION_CONFIG_PATH } from '../../domain/verification-config';
import { readVerificationConfig } from '../gate-discovery/explicit-layers';
import { goWorkPatterns } from '../gate-discovery/go-manifest';
import { jvmCommand, readJvmFacts, type JvmFacts } from '../gate-discovery/jvm-manifest';
import type { WorkspaceFiles } from '../gate-discovery/workspace-files';
import { gradleSetupArgv } from './gradle-setup';
import { addInferred as add, type Installed } from './inferred-command';
import { inferPython } from './python-setup';

// Which commands install a repository's dependencies (issue 9). The most specific layer wins as a whole:
// the request's `setup` → `.ai-engineering-loop/verification.json` `setup` → inference from lockfiles and
// manifests. Resolved once from the base commit, like the gate plan, so a maker cannot steer it.

/** The set-up plan of the workspace `files` reads; `requested` is the request's `setup` (an empty list installs nothing). */
export async function setupPlan(
  files: WorkspaceFiles,
  requested: SetupCommand[] | undefined,
  installed: Installed,
): Promise<SetupPlan> {
  const { notes } = files;
  const inferred = await inferSetup(files, installed);
  if (requested) {
    return {
      ...inferred,
      commands: requested.map((c) => explicit(c, 'contract', 'loop request setup')),
      notes: [...notes, ...inferred.notes],
    };
  }
  const config = await readVerificationConfig(files);
  if (config?.setup) {
    return {
      ...inferred,
      commands: config.setup.map((c, i) => explicit(c, 'repository-config', `${VERIFICATION_CONFIG_PATH} setup[${i}]`)),
      notes: [...notes, ...inferred.notes],
    };
  }
  return { ...inferred, notes: [...notes, ...inferred.notes] };
}

function explicit(
  c: { argv: string[]; timeoutSeconds?: number },
  source: 'contract' | 'repository-config',
  detail: string,
): ResolvedSetupCommand {
  return { argv: c.argv, timeoutSeconds: c.timeoutSeconds ?? DEFAULT_SETUP_TIMEOUT_SECONDS, source, detail };
}

/** Inference only: every ecosystem found at the repository root, in a fixed order. */
async function inferSetup(files: WorkspaceFiles, installed: Installed): Promise<SetupPlan> {
  const plan: SetupPlan = { commands: [], outputs: [], binDirs: [], corepack: [], notes: [] };
  await inferNode(files, plan, installed);
  await inferPython(files, plan, installed);
  // In a go.work workspace, `go mod download` fails on a member another requires at an unpublished
  // version (it asks the proxy for it); loading every package and test of the used modules downloads
  // exactly what they import, the workspace's own modules from the workspace. -e: a package the maker is
  // yet to write does not fail set-up.
  const goWork = await files.manifest('go.work');
  if (goWork !== undefined)
    add(
      plan,
      ['go', 'list', '-e', '-deps', '-test', ...goWorkPatterns(goWork, plan.notes)],
      'go.work (go list -deps -test: what every used module imports)',
    );
  else if (await files.isFile('go.mod')) add(plan, ['go', 'mod', 'download'], 'go.mod (go mod download)');
  if (await files.isFile('Cargo.toml')) {
    add(plan, ['cargo', 'fetch'], 'Cargo.toml (cargo fetch)');
    plan.outputs.push('target/');
  }
  const jvm = await readJvmFacts(files);
  if (jvm) inferJvm(jvm, plan);
  return plan;
}

// A test method no test has: surefire still picks and resolves its test provider (JUnit 4, JUnit Platform,
// TestNG), which Maven resolves only when tests run, so the offline gates find it in the cache.
const NO_SUCH_TEST = '*#engineeringLoopResolvesTheTestProvider';

/** Maven and Gradle resolve plugins and dependencies into the loop's cache, so the gates can run offline. */
function inferJvm(jvm: JvmFacts, plan: SetupPlan): void {
  const command = jvmCommand(jvm);
  if (jvm.tool === 'maven') {
    add(
      plan,
      [
        ...command,
        '--no-transfer-progress',
        'test',
        `-Dtest=${NO_SUCH_TEST}`,
        '-Dsurefire.failIfNoSpecifiedTests=false',
        '-DfailIfNoTests=false',
      ],
      'pom.xml (mvn test with no test selected: plugins, dependencies and the test provider into the loop cache)',
    );
    plan.outputs.push('target/');
    return;
  }
  add(
    plan,
    gradleSetupArgv(command),
    `${jvm.manifest} (gradle testClasses and a task resolving every configuration: dependencies into the loop cache)`,
  );
  plan.outputs.push('build/', '.gradle/');
}

async function inferNode(files: WorkspaceFiles, plan: SetupPlan, installed: Installed): Promise<void> {
  const text = await files.manifest('package.json');
  if (text === undefined) return;
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(text) as Record<string, unknown>;
  } catch {
    plan.notes.push('package.json is not valid JSON; no Node dependencies installed');
    return;
  }
  // A workspace root may have no dependencies of its own: its install is its members'.
  const hasDeps =
    ['dependencies', 'devDependencies', 'optionalDependencies'].some((k) => Object.keys(asRecord(pkg[k])).length > 0) ||
    pkg.workspaces !== undefined ||
    (await files.isFile('pnpm-workspace.yaml'));
  if (!hasDeps) return;
  plan.outputs.push('node_modules/');
  const declared =
    typeof pkg.packageManager === 'string' ? /^(npm|pnpm|yarn|bun)@(\d+)/.exec(pkg.packageManager) : null;
  const lockfile = await files.firstFile([
    'pnpm-lock.yaml',
    'yarn.lock',
    'bun.lock',
    'bun.lockb',
    'package-lock.json',
    'npm-shrinkwrap.json',
  ]);
  const byLock = lockfile?.startsWith('pnpm')
    ? 'pnpm'
    : lockfile === 'yarn.lock'
      ? 'yarn'
      : lockfile?.startsWith('bun')
        ? 'bun'
        : lockfile
          ? 'npm'
          : undefined;
  const manager = declared?.[1] ?? byLock ?? 'npm';
  const why = declared
    ? `packageManager ${String(pkg.packageManager)}`
    : (lockfile ?? 'package.json without a lockfile');
  const locked = lockfile !== undefined && byLock === manager;
  switch (manager) {
    case 'pnpm':
      plan.corepack.push('pnpm');
      add(
        plan,
        ['corepack', 'pnpm', 'install', locked ? '--frozen-lockfile' : '--no-lockfile'],
        `${why} (pnpm through corepack)`,
      );
      return;
    case 'yarn': {
      plan.corepack.push('yarn');
      const berry = (declared !== null && Number(declared[2]) >= 2) || (await files.isFile('.yarnrc.yml'));
      if (berry) {
        plan.outputs.push('.pnp.cjs', '.pnp.loader.mjs', '.yarn/install-state.gz');
        add(
          plan,
          ['corepack', 'yarn', 'install', ...(locked ? ['--immutable'] : [])],
          `${why} (yarn berry through corepack)`,
        );
      } else {
        add(
          plan,
          ['corepack', 'yarn', 'install', locked ? '--frozen-lockfile' : '--no-lockfile', '--non-interactive'],
          `${why} (yarn classic through corepack)`,
        );
      }
      return;
    }
    case 'bun':
      if (!installed('bun'))
        plan.notes.push('bun is not installed on the worker: set-up will fail and escalate ENVIRONMENT');
      add(plan, ['bun', 'install', ...(locked ? ['--frozen-lockfile'] : [])], `${why} (bun)`);
      return;
    default:
      // Without a lockfile, npm must not write one: it would become part of the maker's checkpoint.
      add(
        plan,
        locked
          ? ['npm', 'ci', '--no-audit', '--no-fund']
          : ['npm', 'install', '--no-audit', '--no-fund', '--no-package-lock'],
        `${why} (npm)`,
      );
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
