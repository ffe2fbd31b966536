import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commitAll, excludeFromCheckpoints } from '../../activities/git';
import { resolveSetupPlan } from '../../activities/setup/infer-setup';
import { environmentProblem } from '../../activities/verification/gate-outcome';
import { operatorHint } from '../../activities/setup/operator-hints';
import { SERVICE_EXCLUDES, touchesSetupInputs } from '../../domain/setup';

// Set-up inference from lockfiles and manifests, its override layers, and what never enters a checkpoint.

function repo(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'setup-infer-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}
const pkg = (extra: object = {}) =>
  JSON.stringify({ name: 'x', version: '1.0.0', devDependencies: { jest: '29.7.0' }, ...extra });
const argvs = async (files: Record<string, string>, searchPath = '/nonexistent') =>
  (await resolveSetupPlan({ workspace: repo(files), searchPath })).commands.map((c) => c.argv.join(' '));

describe('set-up inference', () => {
  test('npm: npm ci with a lockfile, npm install without writing one otherwise; nothing without dependencies', async () => {
    expect(await argvs({ 'package.json': pkg(), 'package-lock.json': '{}' })).toEqual(['npm ci --no-audit --no-fund']);
    expect(await argvs({ 'package.json': pkg() })).toEqual(['npm install --no-audit --no-fund --no-package-lock']);
    expect(await argvs({ 'package.json': JSON.stringify({ name: 'x', scripts: { test: 'node --test' } }) })).toEqual(
      [],
    );
  });

  test('pnpm and yarn through corepack, from the lockfile or packageManager', async () => {
    const pnpm = await resolveSetupPlan({
      workspace: repo({ 'package.json': pkg(), 'pnpm-lock.yaml': '' }),
      searchPath: '',
    });
    expect(pnpm.commands.map((c) => [c.argv.join(' '), c.source])).toEqual([
      ['corepack pnpm install --frozen-lockfile', 'manifest-inference'],
    ]);
    expect(pnpm.corepack).toEqual(['pnpm']);
    expect(pnpm.outputs).toContain('node_modules/');
    expect(await argvs({ 'package.json': pkg({ packageManager: 'pnpm@9.15.0' }) })).toEqual([
      'corepack pnpm install --no-lockfile',
    ]);
    expect(await argvs({ 'package.json': pkg(), 'yarn.lock': '' })).toEqual([
      'corepack yarn install --frozen-lockfile --non-interactive',
    ]);
    expect(await argvs({ 'package.json': pkg({ packageManager: 'yarn@4.5.0' }), 'yarn.lock': '' })).toEqual([
      'corepack yarn install --immutable',
    ]);
    expect(await argvs({ 'package.json': pkg(), 'bun.lock': '' })).toEqual(['bun install --frozen-lockfile']);
  });

  test('python: a venv per work dir, pip with the test extras, requirements files, poetry', async () => {
    const pyproject =
      '[project]\nname = "x"\ndependencies = ["requests"]\n\n[project.optional-dependencies]\ntest = ["pytest"]\ndocs = ["sphinx"]\n';
    const plan = await resolveSetupPlan({ workspace: repo({ 'pyproject.toml': pyproject }), searchPath: '' });
    expect(plan.commands.map((c) => c.argv.join(' '))).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install -e .[test]',
    ]);
    expect(plan.binDirs).toEqual(['.venv/bin']);
    expect(plan.outputs).toContain('.venv/');
    expect(await argvs({ 'requirements.txt': 'pytest\n', 'requirements-dev.txt': 'ruff\n' })).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install -r requirements.txt',
      '.venv/bin/python -m pip install -r requirements-dev.txt',
    ]);
    expect(await argvs({ 'pyproject.toml': '[tool.poetry]\nname = "x"\n', 'poetry.lock': '' })).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install --quiet poetry',
      '.venv/bin/poetry install --no-interaction',
    ]);
  });

  test('python: test dependencies from tox.ini [testenv] and hatch environments', async () => {
    const tox = [
      '[tox]',
      'envlist = py311',
      '',
      '[testenv]',
      'extras = test',
      'deps =',
      '    pytest>=8, <9  # the runner',
      '    coverage[toml]',
      '    -r{toxinidir}/requirements-ci.txt',
      '    py38: pytest<7',
      '    --index-url=https://elsewhere.invalid/simple',
      '    git+https://example.invalid/x.git',
      '    -r ../outside.txt',
      'commands = pytest {posargs}',
      '',
      '[testenv:lint]',
      'deps = ruff',
    ].join('\n');
    expect(await argvs({ 'setup.py': 'from setuptools import setup\nsetup()\n', 'tox.ini': tox })).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install -e .[test]',
      '.venv/bin/python -m pip install -r requirements-ci.txt',
      '.venv/bin/python -m pip install pytest>=8, <9 coverage[toml]',
    ]);
    const hatch = [
      '[project]',
      'name = "x"',
      '',
      '[tool.hatch.envs.default]',
      'dependencies = [',
      '  "pytest",',
      '  "coverage[toml]>=6.5",',
      ']',
      '',
      '[tool.hatch.envs.docs]',
      'dependencies = ["sphinx"]',
    ].join('\n');
    expect(await argvs({ 'pyproject.toml': hatch })).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install -e .',
      '.venv/bin/python -m pip install pytest coverage[toml]>=6.5',
    ]);
  });

  test('go and rust fetch their modules', async () => {
    expect(await argvs({ 'go.mod': 'module x\n' })).toEqual(['go mod download']);
    expect(await argvs({ 'Cargo.toml': '[package]\nname = "x"\n' })).toEqual(['cargo fetch']);
  });

  test('workspaces install once, at the root', async () => {
    // go.work without a root module: go mod download there, in workspace mode, covers every used module.
    const work = await resolveSetupPlan({
      workspace: repo({ 'go.work': 'go 1.22\nuse (\n\t./calc\n\t./labels\n)\n', 'calc/go.mod': 'module c\n' }),
      searchPath: '',
    });
    expect(work.commands.map((c) => [c.argv.join(' '), c.detail])).toEqual([
      ['go mod download', 'go.work (go mod download: every module it uses)'],
    ]);
    // With a root go.mod too, once.
    expect(await argvs({ 'go.mod': 'module x\n', 'go.work': 'go 1.22\nuse .\n' })).toEqual(['go mod download']);
    // A virtual Cargo manifest, and npm/pnpm workspaces: the root's install covers every member.
    expect(await argvs({ 'Cargo.toml': '[workspace]\nmembers = ["crates/*"]\n' })).toEqual(['cargo fetch']);
    expect(
      await argvs({
        'package.json': JSON.stringify({ private: true, workspaces: ['packages/*'] }),
        'package-lock.json': '{}',
        'packages/a/package.json': pkg(),
      }),
    ).toEqual(['npm ci --no-audit --no-fund']);
    expect(
      await argvs({
        'package.json': JSON.stringify({ private: true }),
        'pnpm-workspace.yaml': 'packages:\n  - packages/*\n',
        'pnpm-lock.yaml': '',
        'packages/a/package.json': pkg(),
      }),
    ).toEqual(['corepack pnpm install --frozen-lockfile']);
  });

  test('the request beats the repository config, which beats inference; [] installs nothing', async () => {
    const files = {
      'package.json': pkg(),
      'package-lock.json': '{}',
      '.ai-engineering-loop/verification.json': JSON.stringify({
        version: 1,
        setup: [{ argv: ['npm', 'ci', '--ignore-scripts'] }],
      }),
    };
    const fromRepo = await resolveSetupPlan({ workspace: repo(files) });
    expect(fromRepo.commands).toEqual([
      {
        argv: ['npm', 'ci', '--ignore-scripts'],
        timeoutSeconds: 600,
        source: 'repository-config',
        detail: '.ai-engineering-loop/verification.json setup[0]',
      },
    ]);
    const fromRequest = await resolveSetupPlan({
      workspace: repo(files),
      requested: [{ argv: ['make', 'deps'], timeoutSeconds: 60 }],
    });
    expect(fromRequest.commands.map((c) => [c.argv.join(' '), c.source])).toEqual([['make deps', 'contract']]);
    expect((await resolveSetupPlan({ workspace: repo(files), requested: [] })).commands).toEqual([]);
  });

  test('a changed manifest or lockfile means set-up again', () => {
    expect(touchesSetupInputs(['src/a.js'])).toBe(false);
    expect(touchesSetupInputs(['package-lock.json'])).toBe(true);
    expect(touchesSetupInputs(['packages/web/package.json'])).toBe(true);
    expect(touchesSetupInputs(['requirements-dev.txt'])).toBe(true);
  });
});

describe('a command that cannot start is an environment problem', () => {
  const run = { argv: ['npm', 'test'], exitCode: 1, spawnError: null, stderr: '' };
  test('ENOENT, exit 127 "not found", exit 126', () => {
    expect(environmentProblem({ ...run, exitCode: null, spawnError: 'ENOENT: command not found: pnpm' })).toContain(
      'could not start',
    );
    expect(environmentProblem({ ...run, exitCode: 127, stderr: '> jest\nsh: 1: jest: not found\n' })).toContain(
      'jest: not found',
    );
    expect(environmentProblem({ ...run, exitCode: 126, stderr: 'permission denied' })).toContain('126');
  });
  test('a runner python -m cannot find, whatever the exit code', () => {
    const pytest = { ...run, argv: ['.venv/bin/python', '-m', 'pytest'] };
    expect(environmentProblem({ ...pytest, stderr: '/w/.venv/bin/python: No module named pytest\n' })).toContain(
      'could not find its runner, nothing installed it: /w/.venv/bin/python: No module named pytest',
    );
    // The code under test importing what is not installed is the code's to fix.
    const traceback = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'requests'\n";
    expect(environmentProblem({ ...pytest, stderr: traceback })).toBeNull();
  });
  test('an ordinary failure, or a refused argument, is not', () => {
    expect(environmentProblem({ ...run, stderr: 'not found' })).toBeNull();
    expect(
      environmentProblem({ ...run, exitCode: null, spawnError: 'refused: ../x leads outside the workspace' }),
    ).toBeNull();
  });
});

describe('set-up failures an operator switch fixes say which', () => {
  test('corepack without registry signatures, an untrusted TLS proxy; anything else names none', () => {
    expect(
      operatorHint('Internal Error: No compatible signature found in package metadata\n    at fetchVersion'),
    ).toContain('COREPACK_INTEGRITY_KEYS=0');
    expect(operatorHint('Error: Cannot find matching keyid: {"signatures":[]}')).toContain('COREPACK_INTEGRITY_KEYS=0');
    expect(
      operatorHint('npm error code SELF_SIGNED_CERT_IN_CHAIN\nself-signed certificate in certificate chain'),
    ).toContain('NODE_EXTRA_CA_CERTS');
    expect(operatorHint('npm error code ETARGET\nNo matching version found for left-pad@99')).toBeNull();
  });
});

describe('workspace hygiene', () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
      cwd,
      encoding: 'utf8',
    });

  test('what set-up and tools create never enters a checkpoint; the maker’s new files and tracked edits do', async () => {
    const dir = repo({ 'src/a.js': '1\n', 'build/tracked.txt': 'v1\n', 'target/kept.txt': 'committed on purpose\n' });
    git(dir, 'init', '--quiet', '--initial-branch=main');
    git(dir, 'add', '--all');
    git(dir, 'commit', '--quiet', '-m', 'base');
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    };
    write('.venv/lib/site.py', 'x');
    write('node_modules/jest/index.js', 'x');
    write('pkg/__pycache__/a.cpython-311.pyc', 'x');
    write('coverage/lcov.info', 'x');
    write('src/new.js', 'new\n');
    write('target/kept.txt', 'edited\n');
    await excludeFromCheckpoints(dir, SERVICE_EXCLUDES);
    await excludeFromCheckpoints(dir, SERVICE_EXCLUDES);
    expect((await commitAll(dir, 'checkpoint'))?.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(dir, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()).toEqual([
      'src/new.js',
      'target/kept.txt',
    ]);
    const exclude = fs.readFileSync(path.join(dir, '.git/info/exclude'), 'utf8');
    expect(exclude.split('\n').filter((l) => l === 'node_modules/')).toHaveLength(1);
  });
});
