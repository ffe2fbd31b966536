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
    const setupPy = 'from setuptools import setup\nsetup()\n';
    expect(await argvs({ 'setup.py': setupPy, 'tox.ini': tox, 'requirements-ci.txt': 'hypothesis\n' })).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install -e .[test]',
      '.venv/bin/python -m pip install -r requirements-ci.txt',
      '.venv/bin/python -m pip install pytest>=8, <9 coverage[toml]',
    ]);
    // A requirements file the repository does not have would fail set-up: left out, with a note.
    const missing = await resolveSetupPlan({
      workspace: repo({ 'setup.py': setupPy, 'tox.ini': tox }),
      searchPath: '',
    });
    expect(missing.commands.map((c) => c.argv.join(' '))).not.toContain(
      '.venv/bin/python -m pip install -r requirements-ci.txt',
    );
    expect(missing.notes).toContain(
      'tox.ini [testenv] deps names requirements-ci.txt, which the repository does not have; not installed',
    );
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

  test('python: PEP 735 dependency groups named for the gates, expanded for any pip; with uv, named to uv sync', async () => {
    const pyproject = [
      '[project]',
      'name = "x"',
      'version = "0.1.0"',
      '',
      '[dependency-groups]',
      'test = ["pytest>=8", {include-group = "typing"}]',
      'typing = ["mypy"]',
      'docs = ["sphinx"]',
      'lint = ["ruff", {include-group = "lint"}]',
    ].join('\n');
    const plan = await resolveSetupPlan({ workspace: repo({ 'pyproject.toml': pyproject }), searchPath: '' });
    expect(plan.commands.map((c) => [c.argv.join(' '), c.detail])).toEqual([
      ['python3 -m venv .venv', 'a virtual environment for this work dir (.venv)'],
      ['.venv/bin/python -m pip install -e .', 'pyproject.toml (pip install -e .)'],
      [
        '.venv/bin/python -m pip install pytest>=8 mypy',
        'pyproject.toml [dependency-groups] test, typing (pip install)',
      ],
    ]);
    expect(plan.notes).toContain(
      'pyproject.toml [dependency-groups] lint is not installed: it includes itself (lint → lint)',
    );
    // Groups need no [project]: a repository of scripts and tests gets them too.
    expect(await argvs({ 'pyproject.toml': '[dependency-groups]\ndev = ["pytest"]\n' })).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install pytest',
    ]);
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'setup-uv-'));
    fs.writeFileSync(path.join(bin, 'uv'), '#!/bin/sh\n', { mode: 0o755 });
    expect(await argvs({ 'pyproject.toml': pyproject, 'uv.lock': '' }, bin)).toEqual([
      'uv sync --frozen --all-extras --group test --group typing',
    ]);
  });

  test('python: poetry installs its optional test groups with --with; groups pip installs are converted', async () => {
    const poetry = [
      '[tool.poetry]',
      'name = "x"',
      'version = "0.1.0"',
      '',
      '[tool.poetry.group.test.dependencies]',
      'pytest = "^8.0"',
      '',
      '[tool.poetry.group.typing]',
      'optional = true',
      '[tool.poetry.group.typing.dependencies]',
      'mypy = "^1.9"',
      '',
      '[tool.poetry.group.docs]',
      'optional = true',
      '[tool.poetry.group.docs.dependencies]',
      'mkdocs = "*"',
    ].join('\n');
    expect(await argvs({ 'pyproject.toml': poetry, 'poetry.lock': '' })).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install --quiet poetry',
      '.venv/bin/poetry install --no-interaction --with typing',
    ]);
    // PEP 621 metadata with poetry's groups and no lockfile: pip installs the project, and the groups.
    const pep621 = [
      '[project]',
      'name = "x"',
      'version = "0.1.0"',
      '',
      '[build-system]',
      'requires = ["poetry-core>=2.0"]',
      'build-backend = "poetry.core.masonry.api"',
      '',
      '[tool.poetry.group.dev.dependencies]',
      'pytest = "^8.3"',
      'pytest-mock = { version = "~3.14", python = ">=3.9" }',
      'local = { path = "../local" }',
    ].join('\n');
    const plan = await resolveSetupPlan({ workspace: repo({ 'pyproject.toml': pep621 }), searchPath: '' });
    expect(plan.commands.map((c) => [c.argv, c.detail])).toEqual([
      [['python3', '-m', 'venv', '.venv'], 'a virtual environment for this work dir (.venv)'],
      [['.venv/bin/python', '-m', 'pip', 'install', '-e', '.'], 'pyproject.toml (pip install -e .)'],
      [
        [
          '.venv/bin/python',
          '-m',
          'pip',
          'install',
          'pytest>=8.3,<9.0',
          'pytest-mock>=3.14,<3.15; python_version >= "3.9"',
        ],
        'pyproject.toml [tool.poetry] groups dev (pip install)',
      ],
    ]);
  });

  test('python: the test sessions of noxfile.py, read without running it', async () => {
    const noxfile = [
      'import nox',
      '',
      '@nox.session(python=["3.11", "3.12"])',
      'def tests(session):',
      '    session.install("-r", "requirements/test.txt", "-r", "requirements/gone.txt")',
      '    session.install("-e", ".[test]", "pytest-randomly", "--index-url", "https://evil.invalid/simple")',
      '    session.run("pytest")',
      '',
      '@nox.session',
      'def docs(session):',
      '    session.install("sphinx")',
    ].join('\n');
    const plan = await resolveSetupPlan({
      workspace: repo({
        'setup.py': 'from setuptools import setup\nsetup()\n',
        'noxfile.py': noxfile,
        'requirements/test.txt': 'pytest\n',
      }),
      searchPath: '',
    });
    expect(plan.commands.map((c) => [c.argv.join(' '), c.detail])).toEqual([
      ['python3 -m venv .venv', 'a virtual environment for this work dir (.venv)'],
      ['.venv/bin/python -m pip install -e .[test]', 'setup.py / setup.cfg (pip install -e .[test])'],
      [
        '.venv/bin/python -m pip install -r requirements/test.txt',
        'noxfile.py session tests -r requirements/test.txt (pip install -r)',
      ],
      ['.venv/bin/python -m pip install pytest-randomly', 'noxfile.py session tests (pip install)'],
    ]);
    expect(plan.notes).toContain(
      'noxfile.py session tests names requirements/gone.txt, which the repository does not have; not installed',
    );
    const huge = `import nox\n@nox.session\ndef tests(session):\n    session.install("pytest")\n${'#'.repeat(300_000)}\n`;
    const ignored = await resolveSetupPlan({ workspace: repo({ 'setup.py': '', 'noxfile.py': huge }), searchPath: '' });
    expect(ignored.commands.map((c) => c.argv.join(' '))).toEqual([
      'python3 -m venv .venv',
      '.venv/bin/python -m pip install -e .',
    ]);
    expect(ignored.notes).toContain('noxfile.py is longer than 262144 characters; its sessions are not read');
  });

  test('python: a source listing more requirements than a command line should hold is refused, with a note', async () => {
    const many = Array.from({ length: 501 }, (_, i) => `"pkg${i}"`).join(', ');
    const plan = await resolveSetupPlan({
      workspace: repo({ 'pyproject.toml': `[dependency-groups]\ntest = [${many}]\n` }),
      searchPath: '',
    });
    expect(plan.commands.map((c) => c.argv.join(' '))).toEqual(['python3 -m venv .venv']);
    expect(plan.notes).toEqual([
      'pyproject.toml [dependency-groups] test lists more than 500 requirements; not installed',
    ]);
  });

  test('go and rust fetch their modules', async () => {
    expect(await argvs({ 'go.mod': 'module x\n' })).toEqual(['go mod download']);
    expect(await argvs({ 'Cargo.toml': '[package]\nname = "x"\n' })).toEqual(['cargo fetch']);
  });

  test('workspaces install once, at the root', async () => {
    // go.work without a root module: every used module's packages and tests loaded, which downloads what
    // they import (go mod download would ask the proxy for a member another requires unpublished).
    const work = await resolveSetupPlan({
      workspace: repo({ 'go.work': 'go 1.22\nuse (\n\t./calc\n\t./labels\n)\n', 'calc/go.mod': 'module c\n' }),
      searchPath: '',
    });
    expect(work.commands.map((c) => [c.argv.join(' '), c.detail])).toEqual([
      [
        'go list -e -deps -test ./calc/... ./labels/...',
        'go.work (go list -deps -test: what every used module imports)',
      ],
    ]);
    // With a root go.mod too, once.
    expect(await argvs({ 'go.mod': 'module x\n', 'go.work': 'go 1.22\nuse .\n' })).toEqual([
      'go list -e -deps -test ./...',
    ]);
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
