import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NO_TESTS_GATE, REPOSITORY_NETWORK_IGNORED } from '../../analysis/gate-discovery/plan-gates';
import { discoverGates } from '../../activities/verification/gate-discovery';
import type { GateCommand, GatePlan, ResolvedGate } from '../../domain/gates';
import { VerificationConfigError } from '../../domain/verification-config';

// Each test writes a small fixture repository into its own temp dir, then checks the plan discovery makes.

const tempDirs: string[] = [];
afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gate-discovery-'));
  tempDirs.push(dir);
  return dir;
}

/** Creates a repository from relative path → content (objects are written as JSON). */
async function repo(files: Record<string, string | object>): Promise<string> {
  const dir = await tempDir();
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

function discover(workspace: string, contractGates: GateCommand[] = []): Promise<GatePlan> {
  return discoverGates({ workspace, contractGates });
}

function gate(plan: GatePlan, name: ResolvedGate['gate']): ResolvedGate | undefined {
  return plan.gates.find((g) => g.gate === name);
}

/** gate → argv and source, for compact assertions. */
function summary(plan: GatePlan): Record<string, { argv: string[]; source: string }> {
  return Object.fromEntries(plan.gates.map((g) => [g.gate, { argv: g.argv, source: g.source }]));
}

async function configError(promise: Promise<unknown>): Promise<VerificationConfigError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(VerificationConfigError);
  return error as VerificationConfigError;
}

const manifest = 'manifest-inference';
const config = (gates: object, extra: object = {}) => ({ version: 1, gates, ...extra });
const NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1';

describe('manifest inference: package.json', () => {
  it('npm: scripts become gates in order, with npm (package-lock.json) as provenance', async () => {
    const dir = await repo({
      'package.json': { scripts: { build: 'tsc', lint: 'eslint .', test: 'jest', typecheck: 'tsc --noEmit' } },
      'package-lock.json': '{}',
    });
    const plan = await discover(dir);
    expect(plan.gates.map((g) => g.gate)).toEqual(['tests', 'typecheck', 'lint', 'build']);
    expect(summary(plan)).toEqual({
      tests: { argv: ['npm', 'test'], source: manifest },
      typecheck: { argv: ['npm', 'run', 'typecheck'], source: manifest },
      lint: { argv: ['npm', 'run', 'lint'], source: manifest },
      build: { argv: ['npm', 'run', 'build'], source: manifest },
    });
    expect(gate(plan, 'tests')).toMatchObject({
      timeoutSeconds: 300,
      detail: 'package.json scripts.test, run with npm (package-lock.json)',
    });
    expect(plan.profile).toBe('library');
  });

  it('pnpm: package manager from pnpm-lock.yaml', async () => {
    const dir = await repo({ 'package.json': { scripts: { test: 'vitest', lint: 'eslint .' } }, 'pnpm-lock.yaml': '' });
    const plan = await discover(dir);
    expect(summary(plan)).toEqual({
      tests: { argv: ['pnpm', 'test'], source: manifest },
      lint: { argv: ['pnpm', 'run', 'lint'], source: manifest },
    });
    expect(gate(plan, 'tests')!.detail).toBe('package.json scripts.test, run with pnpm (pnpm-lock.yaml)');
  });

  it('yarn: package manager from yarn.lock; type-check alias counts as typecheck', async () => {
    const dir = await repo({ 'package.json': { scripts: { test: 'jest', 'type-check': 'tsc' } }, 'yarn.lock': '' });
    expect(summary(await discover(dir))).toEqual({
      tests: { argv: ['yarn', 'test'], source: manifest },
      typecheck: { argv: ['yarn', 'run', 'type-check'], source: manifest },
    });
  });

  it('bun: runs the test script with `bun run test`, since `bun test` is bun’s own runner', async () => {
    const dir = await repo({ 'package.json': { scripts: { test: 'vitest' } }, 'bun.lockb': '' });
    expect(gate(await discover(dir), 'tests')!.argv).toEqual(['bun', 'run', 'test']);
  });

  it('packageManager field beats lockfiles; several lockfiles are noted', async () => {
    const declared = await repo({
      'package.json': { packageManager: 'pnpm@9.1.0', scripts: { test: 'x' } },
      'package-lock.json': '{}',
    });
    expect(gate(await discover(declared), 'tests')!.detail).toBe(
      'package.json scripts.test, run with pnpm (packageManager pnpm@9.1.0)',
    );

    const both = await repo({ 'package.json': { scripts: { test: 'x' } }, 'package-lock.json': '{}', 'yarn.lock': '' });
    const plan = await discover(both);
    expect(gate(plan, 'tests')!.argv).toEqual(['yarn', 'test']);
    expect(plan.notes.join('\n')).toMatch(/several lockfiles/);
  });

  it('ignores npm’s default "no test specified" script', async () => {
    const dir = await repo({ 'package.json': { scripts: { test: NPM_PLACEHOLDER } }, 'package-lock.json': '{}' });
    const plan = await discover(dir);
    expect(plan.gates).toEqual([]);
    expect(plan.notes.join('\n')).toMatch(/placeholder; not a test gate/);
  });

  it('without a lockfile uses npm and says so', async () => {
    const dir = await repo({ 'package.json': { scripts: { lint: 'eslint .' } } });
    expect(gate(await discover(dir), 'lint')).toMatchObject({
      argv: ['npm', 'run', 'lint'],
      detail: 'package.json scripts.lint, run with npm (no lockfile, npm by default)',
    });
  });
});

describe('manifest inference: go.mod, Cargo.toml, pyproject.toml', () => {
  it('go.mod: go test / go vet / go build; lint only with a golangci-lint config', async () => {
    const plain = await discover(await repo({ 'go.mod': 'module example.com/lib\n\ngo 1.22\n' }));
    expect(summary(plain)).toEqual({
      tests: { argv: ['go', 'test', '-json', './...'], source: manifest },
      typecheck: { argv: ['go', 'vet', './...'], source: manifest },
      build: { argv: ['go', 'build', './...'], source: manifest },
    });
    expect(plain.profile).toBe('library');

    const linted = await discover(
      await repo({ 'go.mod': 'module example.com/lib\n', '.golangci.yml': 'linters: {}\n' }),
    );
    expect(gate(linted, 'lint')).toMatchObject({ argv: ['golangci-lint', 'run'], source: manifest });
  });

  it('Cargo.toml: cargo test / check / build; clippy only when configured', async () => {
    const plain = await discover(await repo({ 'Cargo.toml': '[package]\nname = "lib"\nversion = "0.1.0"\n' }));
    expect(summary(plain)).toEqual({
      tests: { argv: ['cargo', 'test'], source: manifest },
      typecheck: { argv: ['cargo', 'check'], source: manifest },
      build: { argv: ['cargo', 'build'], source: manifest },
    });

    const clippy = await discover(
      await repo({ 'Cargo.toml': '[package]\nname = "lib"\n\n[lints.clippy]\npedantic = "warn"\n' }),
    );
    expect(gate(clippy, 'lint')).toMatchObject({
      argv: ['cargo', 'clippy', '--', '-D', 'warnings'],
      detail: 'Cargo.toml, clippy configured in Cargo.toml [lints.clippy]',
    });
  });

  it('Cargo [workspace]: monorepo, and every command covers the workspace', async () => {
    const plan = await discover(
      await repo({ 'Cargo.toml': '[workspace]\nmembers = ["crates/*"]\n', 'clippy.toml': 'msrv = "1.70"\n' }),
    );
    expect(plan.profile).toBe('monorepo');
    expect(summary(plan)).toEqual({
      tests: { argv: ['cargo', 'test', '--workspace'], source: manifest },
      typecheck: { argv: ['cargo', 'check', '--workspace'], source: manifest },
      lint: { argv: ['cargo', 'clippy', '--workspace', '--', '-D', 'warnings'], source: manifest },
      build: { argv: ['cargo', 'build', '--workspace'], source: manifest },
    });
  });

  it('pyproject.toml: pytest, mypy and ruff from configuration, run through uv (uv.lock)', async () => {
    const dir = await repo({
      'pyproject.toml': [
        '[project]',
        'name = "svc"',
        'dependencies = ["requests>=2"]  # runtime',
        '',
        '[tool.pytest.ini_options]',
        'addopts = "-q"',
        '',
        '[tool.mypy]',
        'strict = true',
        '',
        '[tool.ruff.lint]',
        'select = ["E"]',
      ].join('\n'),
      'uv.lock': '',
    });
    const plan = await discover(dir);
    expect(summary(plan)).toEqual({
      tests: { argv: ['uv', 'run', 'pytest', '-rA'], source: manifest },
      typecheck: { argv: ['uv', 'run', 'mypy', '.'], source: manifest },
      lint: { argv: ['uv', 'run', 'ruff', 'check', '.'], source: manifest },
    });
    expect(gate(plan, 'tests')!.detail).toBe(
      'pytest: pyproject.toml [tool.pytest.ini_options], run with uv.lock; -rA lists every passed test',
    );
  });

  it('pyproject.toml: tools found through dependencies, run with python3 -m without a lockfile', async () => {
    const dir = await repo({
      'pyproject.toml': [
        '[project]',
        'name = "lib"',
        'dependencies = [',
        '  "uvicorn[standard]>=0.30",',
        ']',
        '[project.optional-dependencies]',
        'dev = ["PyTest>=8", "ruff"]',
      ].join('\n'),
    });
    const plan = await discover(dir);
    expect(summary(plan)).toEqual({
      tests: { argv: ['python3', '-m', 'pytest', '-rA'], source: manifest },
      lint: { argv: ['python3', '-m', 'ruff', 'check', '.'], source: manifest },
    });
    expect(plan.profile).toBe('library');
  });

  it('pyproject.toml without any test tooling has no tests gate', async () => {
    const plan = await discover(await repo({ 'pyproject.toml': '[project]\nname = "lib"\ndependencies = []\n' }));
    expect(plan.gates).toEqual([]);
    expect(plan.profile).toBe('library');
  });

  it('several manifests: the first (package.json) wins a gate, and the others are noted', async () => {
    const plan = await discover(
      await repo({ 'package.json': { scripts: { test: 'jest' } }, 'package-lock.json': '{}', 'go.mod': 'module x\n' }),
    );
    expect(gate(plan, 'tests')!.argv).toEqual(['npm', 'test']);
    expect(gate(plan, 'build')!.argv).toEqual(['go', 'build', './...']);
    expect(plan.notes).toContain('tests: inferred from package.json; go.mod would also define it');
  });
});

describe('profile detection and profile defaults', () => {
  it('monorepo with npm workspaces: runs a script in the workspaces that have it', async () => {
    const dir = await repo({
      'package.json': { private: true, workspaces: ['packages/*'], scripts: { lint: 'eslint .' } },
      'package-lock.json': '{}',
      'packages/a/package.json': { scripts: { test: 'jest', build: 'tsc' } },
      'packages/b/package.json': { scripts: { test: 'vitest' } },
      'packages/c/package.json': { scripts: {} },
      'tools/x/package.json': { scripts: { test: 'not a workspace' } },
    });
    const plan = await discover(dir);
    expect(plan.profile).toBe('monorepo');
    expect(summary(plan)).toEqual({
      tests: { argv: ['npm', 'test', '--workspaces', '--if-present'], source: 'profile-default' },
      lint: { argv: ['npm', 'run', 'lint'], source: manifest },
      build: { argv: ['npm', 'run', 'build', '--workspaces', '--if-present'], source: 'profile-default' },
    });
    expect(gate(plan, 'tests')!.detail).toBe(
      'monorepo profile default: npm workspaces (package.json workspaces), scripts.test in 2 of 3 workspaces (packages/a, packages/b)',
    );
  });

  it.each<[string, Record<string, string | object>, string]>([
    [
      'pnpm-workspace.yaml',
      { 'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n  - "!**/test/**"\n' },
      'pnpm-workspace.yaml packages',
    ],
    ['lerna.json', { 'lerna.json': { packages: ['modules/*'] } }, 'lerna.json packages'],
    [
      'lerna.json (default packages/*)',
      { 'lerna.json': { version: '1.0.0' }, 'packages/a/package.json': {} },
      'lerna.json with packages/*',
    ],
    ['nx.json', { 'nx.json': {}, 'libs/ui/project.json': {} }, 'nx.json with projects (libs/ui/project.json)'],
    ['go.work', { 'go.work': 'go 1.22\n\nuse (\n\t./api\n\t./worker // the queue\n)\n' }, 'go.work uses 2 modules'],
  ])('%s declaring packages marks a monorepo', async (_name, files, evidence) => {
    const plan = await discover(await repo({ 'package.json': { dependencies: { react: '18' } }, ...files }));
    expect(plan.profile).toBe('monorepo');
    expect(plan.notes).toContain(`profile monorepo detected: ${evidence}`);
  });

  it.each<[string, Record<string, string | object>]>([
    // pnpm settings only (the case): no `packages`
    [
      'pnpm-workspace.yaml with settings only',
      { 'pnpm-workspace.yaml': 'onlyBuiltDependencies:\n  - esbuild\nshamefullyHoist: true\n' },
    ],
    ['pnpm-workspace.yaml with an empty packages list', { 'pnpm-workspace.yaml': 'packages: []\n' }],
    ['lerna.json with an empty packages list', { 'lerna.json': { packages: [] } }],
    ['nx.json for a single project', { 'nx.json': { targetDefaults: {} }, 'project.json': {} }],
    ['turbo.json without workspaces', { 'turbo.json': { tasks: {} } }],
    ['go.work using one module', { 'go.work': 'go 1.22\nuse .\n' }],
    ['Cargo [workspace] without members', { 'Cargo.toml': '[package]\nname = "x"\n\n[workspace]\n' }],
    ['package.json with empty workspaces', { 'package.json': { dependencies: { react: '18' }, workspaces: [] } }],
  ])('%s is not a monorepo', async (_name, files) => {
    const plan = await discover(await repo({ 'package.json': { dependencies: { react: '18' } }, ...files }));
    expect(plan.profile).not.toBe('monorepo');
  });

  it('says why a pnpm-workspace.yaml did not make a monorepo', async () => {
    const plan = await discover(
      await repo({
        'package.json': { scripts: { test: 'jest' } },
        'pnpm-lock.yaml': '',
        'pnpm-workspace.yaml': 'shamefullyHoist: true\n',
      }),
    );
    expect(plan.profile).toBe('library');
    expect(plan.notes).toContain('pnpm-workspace.yaml lists no packages (settings only); not a monorepo');
  });

  it('web-app: a React app with tsconfig.json but no typecheck script gets tsc --noEmit', async () => {
    const dir = await repo({
      'package.json': {
        dependencies: { react: '18' },
        devDependencies: { typescript: '5' },
        scripts: { build: 'vite build' },
      },
      'package-lock.json': '{}',
      'tsconfig.json': '{ "compilerOptions": { "strict": true } }',
    });
    const plan = await discover(dir);
    expect(plan.profile).toBe('web-app');
    expect(gate(plan, 'typecheck')).toMatchObject({
      argv: ['npx', '--no-install', 'tsc', '--noEmit'],
      source: 'profile-default',
      detail:
        'web-app profile default: tsconfig.json and typescript in package.json with no typecheck script, run with npm (package-lock.json)',
    });
    expect(gate(plan, 'build')!.source).toBe(manifest);
  });

  it('pnpm uses pnpm exec; a solution-style tsconfig gets no default (it would check nothing)', async () => {
    const pnpm = await repo({
      'package.json': { dependencies: { vue: '3' }, devDependencies: { typescript: '5' } },
      'pnpm-lock.yaml': '',
      'tsconfig.json': '{}',
    });
    expect(gate(await discover(pnpm), 'typecheck')!.argv).toEqual(['pnpm', 'exec', 'tsc', '--noEmit']);

    const solution = await repo({
      'package.json': { dependencies: { react: '18' }, devDependencies: { typescript: '5' } },
      'tsconfig.json': '{ "files": [], "references": [{ "path": "./tsconfig.app.json" }] }',
    });
    const plan = await discover(solution);
    expect(gate(plan, 'typecheck')).toBeUndefined();
    expect(plan.notes.join('\n')).toMatch(/project references/);
  });

  it.each([
    ['fastify (package.json)', { 'package.json': { dependencies: { fastify: '5' } } }],
    ['express (package.json)', { 'package.json': { dependencies: { express: '4' } } }],
    ['gin (go.mod)', { 'go.mod': 'module svc\n\nrequire (\n\tgithub.com/gin-gonic/gin v1.10.0\n)\n' }],
    ['echo v4 (go.mod)', { 'go.mod': 'module svc\nrequire github.com/labstack/echo/v4 v4.12.0\n' }],
    ['fastapi (pyproject.toml)', { 'pyproject.toml': '[project]\ndependencies = ["fastapi>=0.110"]\n' }],
    ['django (poetry)', { 'pyproject.toml': '[tool.poetry.dependencies]\npython = "^3.12"\nDjango = "^5"\n' }],
  ])('backend-api detected from %s', async (_name, files) => {
    expect((await discover(await repo(files))).profile).toBe('backend-api');
  });

  it('the repository config profile overrides detection', async () => {
    const dir = await repo({
      '.ai-engineering-loop/verification.json': config({}, { profile: 'library' }),
      'package.json': { dependencies: { react: '18' } },
    });
    const plan = await discover(dir);
    expect(plan.profile).toBe('library');
    expect(plan.notes).toContain('profile library set by .ai-engineering-loop/verification.json');
  });
});

describe("workspaces: set-up at the root, every member's gates from one command", () => {
  const members = {
    'packages/core/package.json': { name: '@shop/core', scripts: { test: 'jest', build: 'tsc' } },
    'packages/cart/package.json': { name: '@shop/cart', scripts: { test: 'jest' } },
    'packages/docs/package.json': { name: '@shop/docs', scripts: {} },
  };

  it('pnpm-workspace.yaml: pnpm -r run <script>, which skips a project without it and fails when none has it', async () => {
    const plan = await discover(
      await repo({
        'package.json': { private: true, packageManager: 'pnpm@9.15.4', scripts: { lint: 'eslint .' } },
        'pnpm-lock.yaml': '',
        'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n  - "!packages/docs"\n',
        ...members,
      }),
    );
    expect(plan.profile).toBe('monorepo');
    expect(summary(plan)).toEqual({
      tests: { argv: ['pnpm', '-r', '--no-bail', 'run', 'test'], source: 'profile-default' },
      lint: { argv: ['pnpm', 'run', 'lint'], source: manifest },
      build: { argv: ['pnpm', '-r', '--no-bail', 'run', 'build'], source: 'profile-default' },
    });
    // The `!` pattern leaves packages/docs out of the members.
    expect(gate(plan, 'tests')!.detail).toBe(
      'monorepo profile default: pnpm -r (pnpm-workspace.yaml packages), scripts.test in 2 of 2 workspaces (packages/cart, packages/core)',
    );
  });

  it("pnpm: a root test script is the repository's own orchestration and wins", async () => {
    const plan = await discover(
      await repo({
        'package.json': { private: true, scripts: { test: 'pnpm -r --parallel test' } },
        'pnpm-lock.yaml': '',
        'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n',
        ...members,
      }),
    );
    expect(gate(plan, 'tests')).toMatchObject({ argv: ['pnpm', 'test'], source: manifest });
    expect(gate(plan, 'build')).toMatchObject({
      argv: ['pnpm', '-r', '--no-bail', 'run', 'build'],
      source: 'profile-default',
    });
  });

  it('pnpm reads only pnpm-workspace.yaml: package.json workspaces alone get no default, and a note', async () => {
    const plan = await discover(
      await repo({ 'package.json': { workspaces: ['packages/*'] }, 'pnpm-lock.yaml': '', ...members }),
    );
    expect(plan.profile).toBe('monorepo');
    expect(gate(plan, 'tests')).toBeUndefined();
    expect(plan.notes).toContain(
      "package.json workspaces are not pnpm's: pnpm reads its workspaces from pnpm-workspace.yaml",
    );
  });

  it('yarn berry (4): yarn workspaces foreach --all run <script>', async () => {
    const plan = await discover(
      await repo({
        'package.json': { private: true, packageManager: 'yarn@4.5.3', workspaces: ['packages/*'] },
        'yarn.lock': '',
        '.yarnrc.yml': 'nodeLinker: node-modules\n',
        ...members,
      }),
    );
    expect(summary(plan)).toEqual({
      tests: { argv: ['yarn', 'workspaces', 'foreach', '--all', 'run', 'test'], source: 'profile-default' },
      build: { argv: ['yarn', 'workspaces', 'foreach', '--all', 'run', 'build'], source: 'profile-default' },
    });
  });

  it('yarn 2 and 3 need the workspace-tools plugin for foreach', async () => {
    const files = {
      'package.json': { private: true, packageManager: 'yarn@3.8.7', workspaces: ['packages/*'] },
      'yarn.lock': '',
      ...members,
    };
    const without = await discover(await repo({ ...files, '.yarnrc.yml': 'nodeLinker: node-modules\n' }));
    expect(without.gates).toEqual([]);
    expect(without.notes.join('\n')).toMatch(
      /yarn 3 runs scripts across workspaces only with the workspace-tools plugin/,
    );

    const plugin = [
      'plugins:',
      '  - path: .yarn/plugins/@yarnpkg/plugin-workspace-tools.cjs',
      '    spec: "@yarnpkg/plugin-workspace-tools"',
      '',
    ].join('\n');
    const withPlugin = await discover(await repo({ ...files, '.yarnrc.yml': plugin }));
    expect(gate(withPlugin, 'tests')!.argv).toEqual(['yarn', 'workspaces', 'foreach', '--all', 'run', 'test']);
  });

  it('yarn classic: yarn workspaces run <script>, only when every workspace has the script', async () => {
    const base = { 'package.json': { private: true, workspaces: ['packages/*'] }, 'yarn.lock': '' };
    const plan = await discover(await repo({ ...base, ...members }));
    // packages/docs has no test script (and only packages/core a build script): yarn 1 would fail there.
    expect(gate(plan, 'tests')).toBeUndefined();
    expect(plan.notes).toContain(
      'tests: yarn workspaces run fails in a workspace without scripts.test (packages/docs); set tests in verification.json',
    );
    const all = await discover(
      await repo({
        ...base,
        'packages/core/package.json': { scripts: { test: 'jest' } },
        'packages/cart/package.json': { scripts: { test: 'jest' } },
      }),
    );
    expect(gate(all, 'tests')).toMatchObject({
      argv: ['yarn', 'workspaces', 'run', 'test'],
      source: 'profile-default',
    });
  });

  it('go.work: one ./<module>/... pattern per used module; ./... alone would stop at nested modules', async () => {
    const plan = await discover(
      await repo({
        'go.work': 'go 1.22\n\nuse (\n\t./calc\n\tlabels/\n\t../shared // outside\n)\n',
        'calc/go.mod': 'module example.com/calc\n',
        'labels/go.mod': 'module example.com/labels\n',
        '.golangci.yml': 'linters: {}\n',
      }),
    );
    expect(plan.profile).toBe('monorepo');
    expect(plan.notes).toContain('profile monorepo detected: go.work uses 2 modules');
    expect(plan.notes).toContain('go.work uses ../shared, outside the repository; its packages are not tested');
    expect(summary(plan)).toEqual({
      tests: { argv: ['go', 'test', '-json', './calc/...', './labels/...'], source: manifest },
      typecheck: { argv: ['go', 'vet', './calc/...', './labels/...'], source: manifest },
      lint: { argv: ['golangci-lint', 'run', './calc/...', './labels/...'], source: manifest },
      build: { argv: ['go', 'build', './calc/...', './labels/...'], source: manifest },
    });
    expect(gate(plan, 'tests')!.detail).toBe(
      'go.work: every package of its 2 module(s) (./calc/... ./labels/...), go test -json (a result per test, named by package)',
    );
  });

  it('go.work using the root module and one below it: ./... and ./<module>/...', async () => {
    const plan = await discover(
      await repo({
        'go.mod': 'module example.com/app\n',
        'go.work': 'go 1.22\nuse .\nuse ./tools\n',
        'tools/go.mod': 'module example.com/tools\n',
      }),
    );
    expect(gate(plan, 'tests')!.argv).toEqual(['go', 'test', '-json', './...', './tools/...']);
  });

  it('Cargo: a virtual manifest (no [package]) covers every member', async () => {
    const plan = await discover(
      await repo({
        'Cargo.toml': '[workspace]\nmembers = ["crates/calc", "crates/labels"]\nresolver = "2"\n',
        'crates/calc/Cargo.toml': '[package]\nname = "calc"\n',
        'crates/labels/Cargo.toml': '[package]\nname = "labels"\n',
      }),
    );
    expect(plan.profile).toBe('monorepo');
    expect(gate(plan, 'tests')).toMatchObject({
      argv: ['cargo', 'test', '--workspace'],
      detail: 'Cargo.toml [workspace]: every member, cargo test',
    });
  });
});

describe('precedence: contract → repository config → profile default → manifest inference', () => {
  // A TypeScript web app next to a Go module: every layer has something to say.
  const files = {
    'package.json': {
      dependencies: { react: '18' },
      devDependencies: { typescript: '5' },
      scripts: { test: 'vitest', lint: 'eslint .' },
    },
    'package-lock.json': '{}',
    'tsconfig.json': '{}',
    'go.mod': 'module example.com/mixed\n',
  };
  const repositoryConfig = config({
    tests: { argv: ['make', 'test'], timeoutSeconds: 120, junitReport: 'reports/junit.xml' },
    lint: { argv: ['make', 'lint'] },
  });
  const contract: GateCommand[] = [{ gate: 'tests', argv: ['npm', 'run', 'test:ci'], timeoutSeconds: 200 }];

  it('picks the most specific layer for each gate and records it', async () => {
    const dir = await repo({ ...files, '.ai-engineering-loop/verification.json': repositoryConfig });
    const plan = await discover(dir, contract);
    expect(plan.gates).toEqual([
      {
        gate: 'tests',
        argv: ['npm', 'run', 'test:ci'],
        timeoutSeconds: 200,
        source: 'contract',
        detail: 'task contract (loop request gates)',
      },
      {
        gate: 'typecheck',
        argv: ['npx', '--no-install', 'tsc', '--noEmit'],
        timeoutSeconds: 300,
        source: 'profile-default',
        detail: expect.stringContaining('web-app profile default') as unknown as string,
      },
      {
        gate: 'lint',
        argv: ['make', 'lint'],
        timeoutSeconds: 300,
        source: 'repository-config',
        detail: '.ai-engineering-loop/verification.json gates.lint',
      },
      {
        gate: 'build',
        argv: ['go', 'build', './...'],
        timeoutSeconds: 300,
        source: manifest,
        detail: expect.any(String) as unknown as string,
      },
    ]);
  });

  it('a request gate keeps its JUnit report', async () => {
    const plan = await discover(await repo(files), [
      { gate: 'tests', argv: ['make', 'test'], timeoutSeconds: 60, junitReport: 'out/junit.xml' },
    ]);
    expect(gate(plan, 'tests')).toMatchObject({ source: 'contract', junitReport: 'out/junit.xml' });
  });

  it('each layer gives way to the next when the more specific one is absent', async () => {
    const withConfig = await discover(
      await repo({ ...files, '.ai-engineering-loop/verification.json': repositoryConfig }),
    );
    expect(gate(withConfig, 'tests')).toEqual({
      gate: 'tests',
      argv: ['make', 'test'],
      timeoutSeconds: 120,
      source: 'repository-config',
      detail: '.ai-engineering-loop/verification.json gates.tests',
      junitReport: 'reports/junit.xml',
    });

    const manifestsOnly = await discover(await repo(files));
    expect(summary(manifestsOnly)).toEqual({
      tests: { argv: ['npm', 'test'], source: manifest },
      typecheck: { argv: ['npx', '--no-install', 'tsc', '--noEmit'], source: 'profile-default' },
      lint: { argv: ['npm', 'run', 'lint'], source: manifest },
      build: { argv: ['go', 'build', './...'], source: manifest },
    });

    // Without the TypeScript default, typecheck falls through to the Go manifest.
    const { 'tsconfig.json': _omit, ...noTsconfig } = files;
    expect(gate(await discover(await repo(noTsconfig)), 'typecheck')).toMatchObject({
      argv: ['go', 'vet', './...'],
      source: manifest,
    });
  });

  it('contract gates apply even with no manifest at all', async () => {
    const plan = await discover(await repo({}), [{ gate: 'build', argv: ['make'], timeoutSeconds: 60 }]);
    expect(summary(plan)).toEqual({ build: { argv: ['make'], source: 'contract' } });
  });
});

describe('ceilings', () => {
  it('clamps a repository timeout above 600 s and notes it', async () => {
    const dir = await repo({
      '.ai-engineering-loop/verification.json': config({ build: { argv: ['make'], timeoutSeconds: 3600 } }),
    });
    const plan = await discover(dir);
    expect(gate(plan, 'build')!.timeoutSeconds).toBe(600);
    expect(plan.notes).toContain('build: timeout 3600s from repository-config clamped to the 600s ceiling');
  });

  it('clamps a contract gate that bypassed schema validation too', async () => {
    const plan = await discover(await repo({}), [{ gate: 'tests', argv: ['t'], timeoutSeconds: 601 }]);
    expect(gate(plan, 'tests')!.timeoutSeconds).toBe(600);
  });

  it('rejects maxIterations in the repository config: the budget belongs to the loop request', async () => {
    const dir = await repo({ '.ai-engineering-loop/verification.json': config({}, { maxIterations: 10 }) });
    const error = await configError(discover(dir));
    expect(error.field).toBe('maxIterations');
  });
});

describe('invalid or unsafe verification.json', () => {
  it.each([
    ['empty argv', 'gates.tests.argv', config({ tests: { argv: [] } })],
    ['unknown gate', 'gates.unit', config({ unit: { argv: ['x'] } })],
    ['unknown gate field', 'gates.lint.shell', config({ lint: { argv: ['x'], shell: true } })],
    ['non-integer timeout', 'gates.lint.timeoutSeconds', config({ lint: { argv: ['x'], timeoutSeconds: 1.5 } })],
    [
      'report outside the repo',
      'gates.tests.junitReport',
      config({ tests: { argv: ['x'], junitReport: '../junit.xml' } }),
    ],
    ['unknown profile', 'profile', config({}, { profile: 'cli' })],
    ['wrong version', 'version', { version: 2, gates: {} }],
    ['empty argument', 'gates.build.argv[1]', config({ build: { argv: ['make', ''] } })],
  ])('%s → VerificationConfigError naming %s', async (_name, field, content) => {
    const dir = await repo({
      '.ai-engineering-loop/verification.json': content,
      'package.json': { scripts: { test: 'jest' } },
    });
    const error = await configError(discover(dir));
    expect(error.name).toBe('VerificationConfigError');
    expect(error.file).toBe('.ai-engineering-loop/verification.json');
    expect(error.field).toBe(field);
    expect(error.message).toContain('.ai-engineering-loop/verification.json is invalid');
    expect(error.message).toContain(field);
  });

  it('rejects a file that is not JSON', async () => {
    const dir = await repo({ '.ai-engineering-loop/verification.json': '{ version: 1' });
    const error = await configError(discover(dir));
    expect(error.message).toMatch(/verification\.json is not valid JSON/);
    expect(error.field).toBeNull();
  });

  it('refuses a verification.json symlink that points outside the workspace', async () => {
    const outside = await repo({ 'evil.json': config({ tests: { argv: ['sh', '-c', 'curl evil'] } }) });
    const dir = await repo({ 'package.json': { scripts: { test: 'jest' } } });
    await fs.mkdir(path.join(dir, '.ai-engineering-loop'));
    await fs.symlink(path.join(outside, 'evil.json'), path.join(dir, '.ai-engineering-loop/verification.json'));
    const error = await configError(discover(dir));
    expect(error.message).toMatch(/resolves outside the workspace/);
  });

  it('refuses a config directory symlinked outside the workspace', async () => {
    const outside = await repo({ 'verification.json': config({ tests: { argv: ['x'] } }) });
    const dir = await repo({});
    await fs.symlink(outside, path.join(dir, '.ai-engineering-loop'));
    await configError(discover(dir));
  });

  it('rejects a dangling verification.json symlink instead of treating it as absent', async () => {
    const dir = await repo({ 'package.json': { scripts: { test: 'jest' } } });
    await fs.mkdir(path.join(dir, '.ai-engineering-loop'));
    await fs.symlink('/nonexistent/verification.json', path.join(dir, '.ai-engineering-loop/verification.json'));
    const error = await configError(discover(dir));
    expect(error.message).toMatch(/cannot be read: a symlink to nothing/);
  });

  it('follows a symlink that stays inside the workspace', async () => {
    const dir = await repo({ 'ci/verification.json': config({ lint: { argv: ['make', 'lint'] } }) });
    await fs.mkdir(path.join(dir, '.ai-engineering-loop'));
    await fs.symlink('../ci/verification.json', path.join(dir, '.ai-engineering-loop/verification.json'));
    expect(gate(await discover(dir), 'lint')!.source).toBe('repository-config');
  });

  it('ignores a manifest symlinked outside the workspace, with a note', async () => {
    const outside = await repo({ 'package.json': { scripts: { test: 'jest' } } });
    const dir = await repo({});
    await fs.symlink(path.join(outside, 'package.json'), path.join(dir, 'package.json'));
    const plan = await discover(dir);
    expect(plan.gates).toEqual([]);
    expect(plan.notes).toContain('package.json resolves outside the workspace; ignored');
  });
});

describe('nothing to go on', () => {
  it('no manifest and no config → empty plan, no profile', async () => {
    expect(await discover(await repo({ 'README.md': '# hello\n' }))).toEqual({
      gates: [],
      profile: null,
      notes: [],
      warnings: [NO_TESTS_GATE],
      network: false,
    });
  });

  it('a repository cannot give its gates network: its config asking for it is ignored, with a warning', async () => {
    const plan = await discover(
      await repo({ '.ai-engineering-loop/verification.json': JSON.stringify({ version: 1, network: true }) }),
    );
    expect(plan.network).toBe(false);
    expect(plan.warnings).toContain(REPOSITORY_NETWORK_IGNORED);
    expect(REPOSITORY_NETWORK_IGNORED).toMatch(/gateNetwork, within the operator's SANDBOX_EGRESS_GATES$/);
  });

  it('a verification.md alone is noted, not read', async () => {
    const plan = await discover(await repo({ '.ai-engineering-loop/verification.md': 'run make test' }));
    expect(plan.gates).toEqual([]);
    expect(plan.notes.join('\n')).toMatch(/verification\.md is for people/);
  });
});

describe('pytest found where real projects configure it', () => {
  it.each<[string, Record<string, string | object>, string]>([
    ['tox.ini [pytest]', { 'tox.ini': '[tox]\nenvlist = py312\n\n[pytest]\naddopts = -q\n' }, 'tox.ini [pytest]'],
    [
      'setup.cfg [tool:pytest]',
      { 'setup.cfg': '[metadata]\nname = lib\n\n[tool:pytest]\ntestpaths = tests\n' },
      'setup.cfg [tool:pytest]',
    ],
    ['pytest.ini', { 'pytest.ini': '[pytest]\n' }, 'pytest.ini'],
    ['conftest.py', { 'setup.py': 'from setuptools import setup\nsetup()\n', 'conftest.py': '' }, 'conftest.py'],
    [
      'a tests/ directory',
      { 'tests/unit/test_math.py': 'def test_adds():\n    assert 1 + 1 == 2\n' },
      'test files pytest collects (tests/unit/test_math.py)',
    ],
    [
      'a test/ directory with *_test.py',
      { 'setup.py': '', 'test/math_test.py': '' },
      'test files pytest collects (test/math_test.py)',
    ],
    [
      'a poetry dev group (real TOML: nested tables, inline tables)',
      { 'pyproject.toml': '[tool.poetry.group.dev.dependencies]\npytest = { version = "^8", optional = false }\n' },
      'a pytest dependency in pyproject.toml',
    ],
  ])('%s', async (_name, files, why) => {
    const plan = await discover(await repo(files));
    expect(gate(plan, 'tests')).toMatchObject({
      argv: ['python3', '-m', 'pytest', '-rA'],
      source: manifest,
      detail: `pytest: ${why}, run with no lockfile, python3 -m; -rA lists every passed test`,
    });
    expect(plan.profile).toBe('library');
    expect(plan.warnings).toEqual([]);
  });

  it('a tox.ini without a [pytest] section and no tests is not a pytest project; the plan warns', async () => {
    const plan = await discover(await repo({ 'tox.ini': '[tox]\nenvlist = py312\n', 'setup.py': '' }));
    expect(gate(plan, 'tests')).toBeUndefined();
    expect(plan.warnings).toEqual([NO_TESTS_GATE]);
  });

  it('pyproject.toml that is not TOML is read as empty, with a note', async () => {
    const plan = await discover(await repo({ 'pyproject.toml': '[project\nname = "x"\n', 'conftest.py': '' }));
    expect(gate(plan, 'tests')!.argv).toEqual(['python3', '-m', 'pytest', '-rA']);
    expect(plan.notes.join('\n')).toMatch(/pyproject\.toml is not valid TOML \(.+\); read as empty/);
  });

  it('reads TOML that a line scanner gets wrong: multi-line strings and dotted keys', async () => {
    const plan = await discover(
      await repo({
        'pyproject.toml': [
          '[project]',
          'description = """',
          '[tool.pytest.ini_options]',
          '"""',
          'tool.mypy.strict = true',
        ].join('\n'),
      }),
    );
    // the header inside the string is not a table; `tool.mypy.strict` under [project] is project.tool.mypy
    expect(gate(plan, 'tests')).toBeUndefined();
    expect(gate(plan, 'typecheck')).toBeUndefined();
  });
});
