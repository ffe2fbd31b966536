import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TamperFinding } from '../../analysis/tamper/types';
import { detectTampering } from '../../activities/tamper/detect-tampering';
import { restoreGateEntrypoints } from '../../activities/verification/protected-files';
import type { GateName, ResolvedGate } from '../../domain/gates';
import { git } from '../support/test-git';

// The gate's whole entrypoint is protected (docs/design.md §3.4): files a maker adds where a gate would now read
// them raise GATE_ENTRYPOINT_CHANGED like changed ones, and verification puts every entrypoint back to
// its base state in the fresh checkout. Real git repositories and worktrees throughout.

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

interface Change {
  write?: Record<string, string>;
  symlink?: Record<string, string>;
  remove?: string[];
  rename?: [from: string, to: string][];
}

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'entrypoints-'));
  dirs.push(dir);
  return dir;
}

function commit(dir: string, change: Change): string {
  for (const file of change.remove ?? []) git(dir, 'rm', '-r', '--quiet', file);
  for (const [from, to] of change.rename ?? []) git(dir, 'mv', from, to);
  for (const [file, text] of Object.entries(change.write ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  for (const [file, target] of Object.entries(change.symlink ?? {})) {
    fs.rmSync(path.join(dir, file), { recursive: true, force: true });
    fs.symlinkSync(target, path.join(dir, file));
  }
  git(dir, 'add', '--all', '--force');
  git(dir, 'commit', '--quiet', '--allow-empty', '-m', 'change');
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** Commits `files` as the base and `change` on top as the maker's checkpoint. */
function history(
  files: Record<string, string>,
  change: Change,
): { workspace: string; base: string; checkpoint: string } {
  const workspace = tempDir();
  git(workspace, 'init', '--quiet', '--initial-branch=main');
  const base = commit(workspace, { write: files });
  return { workspace, base, checkpoint: commit(workspace, change) };
}

function gate(argv: string[], name: GateName = 'tests'): ResolvedGate {
  return { gate: name, argv, timeoutSeconds: 300, source: 'manifest-inference', detail: 'test' };
}

/** The GATE_ENTRYPOINT_CHANGED findings on the maker's change (other rules may fire on the same change). */
async function findings(
  files: Record<string, string>,
  change: Change,
  gates: ResolvedGate[],
): Promise<TamperFinding[]> {
  const { workspace, base, checkpoint } = history(files, change);
  const all = await detectTampering({
    workspace,
    baseCommit: base,
    checkpointCommit: checkpoint,
    gates,
    outOfScope: [],
  });
  return all.filter((finding) => finding.rule === 'GATE_ENTRYPOINT_CHANGED');
}

/** The files the findings name, each flagged at most once. */
async function flagged(files: Record<string, string>, change: Change, gates: ResolvedGate[]): Promise<string[]> {
  return (await findings(files, change, gates)).map((finding) => finding.location.file);
}

const lines = (...text: string[]) => `${text.join('\n')}\n`;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const PYTEST = [gate(['python3', '-m', 'pytest', '-rA'])];
const NPM_TEST = [gate(['npm', 'test'])];
const JEST_PACKAGE = json({ name: 'app', scripts: { test: 'jest' }, devDependencies: { jest: '29.7.0' } });
const PYTHON_BASE = {
  'pyproject.toml': lines('[project]', 'name = "app"'),
  'app/total.py': lines('def total(xs):', '    return sum(xs)'),
};

describe('GATE_ENTRYPOINT_CHANGED on files the maker adds', () => {
  it('flags a new conftest.py anywhere pytest collects, naming the file and saying it was added', async () => {
    const found = await findings(
      PYTHON_BASE,
      { write: { 'conftest.py': lines('collect_ignore = ["tests"]'), 'tests/conftest.py': lines('import pytest') } },
      PYTEST,
    );
    expect(found.map((f) => f.location.file)).toEqual(['conftest.py', 'tests/conftest.py']);
    expect(found[0]!.evidence).toContain(
      'conftest.py, read by the tests gate (python3 -m pytest -rA), added:\n+1: collect_ignore = ["tests"]',
    );
  });

  it('flags a new jest.config.js when package.json had no jest key and the gate reaches jest through npm test', async () => {
    const config = lines("module.exports = { testPathIgnorePatterns: ['/test/'] };");
    const found = await findings({ 'package.json': JEST_PACKAGE }, { write: { 'jest.config.js': config } }, NPM_TEST);
    expect(found.map((f) => f.location.file)).toEqual(['jest.config.js']);
    expect(found[0]!.evidence).toContain('tests gate (npm test) → scripts.test');
  });

  it('flags files every gate reads: .npmrc, node_modules/.bin, the repository gate config', async () => {
    const change = {
      write: {
        '.npmrc': lines('script-shell=/bin/true'),
        'node_modules/.bin/jest': lines('#!/bin/sh', 'exit 0'),
        '.ai-engineering-loop/verification.json': json({ gates: { tests: ['true'] } }),
      },
    };
    expect(await flagged({ 'package.json': JEST_PACKAGE }, change, NPM_TEST)).toEqual([
      '.ai-engineering-loop/verification.json',
      '.npmrc',
      'node_modules/.bin/jest',
    ]);
  });

  it('flags modules that would shadow what the pytest gate imports, at the root or in src/', async () => {
    const change = {
      write: {
        'pytest.py': lines('import sys', 'sys.exit(0)'),
        'src/unittest.py': lines('TestCase = object'),
        'src/sitecustomize.py': lines('import os'),
      },
    };
    expect(await flagged(PYTHON_BASE, change, PYTEST)).toEqual([
      'pytest.py',
      'src/sitecustomize.py',
      'src/unittest.py',
    ]);
  });

  it('flags a new vitest.config.ts when the gate runs vitest', async () => {
    const pkg = json({ name: 'app', scripts: { test: 'vitest run' } });
    const found = await flagged(
      { 'package.json': pkg },
      { write: { 'vitest.config.ts': lines("export default { test: { include: ['nothing'] } };") } },
      NPM_TEST,
    );
    expect(found).toEqual(['vitest.config.ts']);
  });

  it('flags a file renamed onto an entrypoint path as added there', async () => {
    const found = await findings(
      { ...PYTHON_BASE, 'tests/helpers.py': lines('def helper():', '    return 1') },
      { rename: [['tests/helpers.py', 'tests/conftest.py']] },
      PYTEST,
    );
    expect(found.map((f) => f.location.file)).toEqual(['tests/conftest.py']);
    expect(found[0]!.evidence).toContain('added (renamed from tests/helpers.py)');
  });

  it('does not flag new source files, new test files, or a source file a config only lists for coverage', async () => {
    const base = {
      'package.json': JEST_PACKAGE,
      'jest.config.js': lines("module.exports = { collectCoverageFrom: ['src/index.js'], roots: ['<rootDir>/src'] };"),
      'src/index.js': lines('module.exports = 1;'),
      ...PYTHON_BASE,
    };
    const change = {
      write: {
        'src/index.js': lines('module.exports = 2;'),
        'src/pager.js': lines('module.exports = {};'),
        'src/pager.test.js': lines("test('pages', () => expect(1).toBe(1));"),
        'app/pytest_helpers.py': lines('x = 1'),
        'tests/test_total.py': lines('def test_total():', '    assert total([1]) == 1'),
        'models/weights.pth': 'binary-ish\n',
      },
    };
    expect(await flagged(base, change, [...NPM_TEST, ...PYTEST])).toEqual([]);
  });
});

describe('GATE_ENTRYPOINT_CHANGED on files the base config names', () => {
  it('flags a setup file named by jest.config.js, with its extension left off, and one named in package.json jest', async () => {
    const base = {
      'package.json': json({ name: 'app', scripts: { test: 'jest' }, jest: { setupFiles: ['./support/polyfill.js'] } }),
      'jest.config.js': lines(
        'module.exports = {',
        "  setupFilesAfterEnv: ['<rootDir>/support/matchers'],",
        "  testEnvironment: 'node',",
        '};',
      ),
      'support/matchers.js': lines('expect.extend({});'),
      'support/polyfill.js': lines('global.fetch = require("node-fetch");'),
    };
    const change = {
      write: {
        'support/matchers.js': lines('expect.extend({ toBe: () => ({ pass: true }) });'),
        'support/polyfill.js': lines(''),
      },
    };
    const found = await findings(base, change, NPM_TEST);
    expect(found.map((f) => f.location.file)).toEqual(['support/matchers.js', 'support/polyfill.js']);
    expect(found[0]!.evidence).toContain('through jest.config.js');
    expect(found[1]!.evidence).toContain('through package.json jest');
  });

  it('flags the setup files and modules a vitest.config.ts names, not the environment package or the package.json it imports', async () => {
    const base = {
      'package.json': json({ name: 'app', scripts: { test: 'vitest run' } }),
      'vitest.config.ts': lines(
        "import { defineConfig } from 'vitest/config';",
        "import { fileURLToPath } from 'node:url';",
        "import { shared } from './config/shared';",
        "import pkg from './package.json';",
        'export default defineConfig({',
        "  test: { ...shared, environment: 'jsdom', setupFiles: ['./test-setup/dom.ts'], globalSetup: fileURLToPath(new URL('./test-setup/db.ts', import.meta.url)) },",
        '});',
      ),
      'config/shared.ts': lines('export const shared = {};'),
      'test-setup/dom.ts': lines("import '@testing-library/jest-dom';"),
      'test-setup/db.ts': lines('export default async () => {};'),
    };
    const change = {
      write: {
        'config/shared.ts': lines('export const shared = { passWithNoTests: true };'),
        'test-setup/dom.ts': '',
        'test-setup/db.ts': '',
        'package.json': json({ name: 'app', scripts: { test: 'vitest run' }, dependencies: { zod: '4.0.0' } }),
      },
    };
    expect(await flagged(base, change, NPM_TEST)).toEqual([
      'config/shared.ts',
      'test-setup/db.ts',
      'test-setup/dom.ts',
    ]);
  });

  it('flags a mocha require from .mocharc.yml and a pytest plugin from addopts', async () => {
    const base = {
      'package.json': json({ name: 'app', scripts: { test: 'mocha' } }),
      '.mocharc.yml': lines('require:', '  - ./test-support/setup.js', 'spec: spec/**/*.js'),
      'test-support/setup.js': lines("require('chai').should();"),
      'pytest.ini': lines('[pytest]', 'addopts = -p fixtures.db -q'),
      'fixtures/db.py': lines('import pytest'),
      'fixtures/data.py': lines('ROWS = []'),
    };
    const change = {
      write: {
        'test-support/setup.js': lines('process.exit(0);'),
        'fixtures/db.py': lines('# nothing'),
        'fixtures/data.py': lines('ROWS = [1]'),
      },
    };
    expect(await flagged(base, change, [...NPM_TEST, ...PYTEST])).toEqual(['fixtures/db.py', 'test-support/setup.js']);
  });
});

describe('restoreGateEntrypoints', () => {
  /** The maker's checkpoint checked out as verification does: a detached worktree of the workspace. */
  function checkoutOf(workspace: string, checkpoint: string): string {
    const checkout = path.join(tempDir(), 'checkout');
    git(workspace, 'worktree', 'add', '--detach', '--quiet', checkout, checkpoint);
    return checkout;
  }

  const read = (checkout: string, file: string) => fs.readFileSync(path.join(checkout, file), 'utf8');
  const exists = (checkout: string, file: string) => fs.existsSync(path.join(checkout, file));

  it('puts back the gate scripts but keeps a new dependency, removes an added conftest.py, restores a changed jest.config.js', async () => {
    const basePackage = { name: 'app', scripts: { test: 'jest', start: 'node .' }, dependencies: { left: '1.0.0' } };
    const config = lines("module.exports = { testEnvironment: 'node' };");
    const { workspace, base, checkpoint } = history(
      { 'package.json': json(basePackage), 'jest.config.js': config, ...PYTHON_BASE },
      {
        write: {
          'package.json': json({
            ...basePackage,
            scripts: { test: 'exit 0', start: 'node server.js' },
            dependencies: { left: '1.0.0', right: '2.0.0' },
          }),
          'jest.config.js': lines("module.exports = { testEnvironment: 'node', testMatch: [] };"),
          'conftest.py': lines('collect_ignore_glob = ["*"]'),
          'src/feature.js': lines('module.exports = 1;'),
        },
      },
    );
    const checkout = checkoutOf(workspace, checkpoint);
    const restored = await restoreGateEntrypoints(workspace, checkout, base, checkpoint, [...NPM_TEST, ...PYTEST]);
    expect(restored).toEqual(['conftest.py', 'jest.config.js', 'package.json#scripts.test']);
    expect(JSON.parse(read(checkout, 'package.json'))).toEqual({
      name: 'app',
      scripts: { test: 'jest', start: 'node server.js' },
      dependencies: { left: '1.0.0', right: '2.0.0' },
    });
    expect(read(checkout, 'package.json')).toMatch(/^\{\n {2}"name"/);
    expect(exists(checkout, 'conftest.py')).toBe(false);
    expect(read(checkout, 'jest.config.js')).toBe(config);
    expect(read(checkout, 'src/feature.js')).toBe(lines('module.exports = 1;'));
  });

  it("puts back a workspace member's test script and keeps its new dependency", async () => {
    const member = { name: '@acme/a', scripts: { test: 'jest' }, dependencies: { left: '1.0.0' } };
    const { workspace, base, checkpoint } = history(
      { 'package.json': json({ scripts: { test: 'pnpm -r run test' } }), 'packages/a/package.json': json(member) },
      {
        write: {
          'packages/a/package.json': json({
            ...member,
            scripts: { test: 'exit 0' },
            dependencies: { left: '1.0.0', right: '2.0.0' },
          }),
        },
      },
    );
    const checkout = checkoutOf(workspace, checkpoint);
    const restored = await restoreGateEntrypoints(workspace, checkout, base, checkpoint, NPM_TEST);
    expect(restored).toEqual(['packages/a/package.json#scripts.test']);
    expect(JSON.parse(read(checkout, 'packages/a/package.json'))).toEqual({
      ...member,
      dependencies: { left: '1.0.0', right: '2.0.0' },
    });
  });

  it('replaces a symlink standing where jest.config.js was, and a symlinked directory on the way to a config, without touching their targets', async () => {
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'jest.config.js'), 'outside\n');
    const config = lines("module.exports = { testEnvironment: 'node' };");
    const { workspace, base, checkpoint } = history(
      { 'package.json': JEST_PACKAGE, 'jest.config.js': config, 'config/jest.config.js': config },
      { symlink: { 'jest.config.js': path.join(outside, 'jest.config.js'), config: outside } },
    );
    const checkout = checkoutOf(workspace, checkpoint);
    const restored = await restoreGateEntrypoints(workspace, checkout, base, checkpoint, [
      gate(['npx', 'jest', '--config', 'config/jest.config.js']),
    ]);
    expect(restored).toEqual(['config/jest.config.js', 'jest.config.js']);
    for (const file of ['jest.config.js', 'config/jest.config.js']) {
      expect(fs.lstatSync(path.join(checkout, file)).isFile()).toBe(true);
      expect(read(checkout, file)).toBe(config);
    }
    expect(fs.lstatSync(path.join(checkout, 'config')).isDirectory()).toBe(true);
    expect(fs.readdirSync(outside)).toEqual(['jest.config.js']);
    expect(fs.readFileSync(path.join(outside, 'jest.config.js'), 'utf8')).toBe('outside\n');
  });

  it('follows a rename: the base config comes back and the renamed copy, itself a config jest would read, goes', async () => {
    const config = lines("module.exports = { testEnvironment: 'node' };");
    const { workspace, base, checkpoint } = history(
      { 'package.json': JEST_PACKAGE, 'jest.config.js': config },
      { rename: [['jest.config.js', 'jest.config.cjs']] },
    );
    const checkout = checkoutOf(workspace, checkpoint);
    expect(await restoreGateEntrypoints(workspace, checkout, base, checkpoint, NPM_TEST)).toEqual([
      'jest.config.cjs',
      'jest.config.js',
    ]);
    expect(read(checkout, 'jest.config.js')).toBe(config);
    expect(exists(checkout, 'jest.config.cjs')).toBe(false);
  });

  it('puts back the pytest section of pyproject.toml and keeps the maker’s new dependency', async () => {
    const pyproject = lines(
      '[project]',
      'name = "app"',
      'dependencies = ["requests"]',
      '',
      '[tool.pytest.ini_options]',
      'addopts = "-q"',
      '',
      '[tool.ruff]',
      'line-length = 100',
    );
    const changed = pyproject
      .replace('"requests"', '"requests", "httpx"')
      .replace('addopts = "-q"', 'addopts = "-q -k nothing"');
    const { workspace, base, checkpoint } = history(
      { 'pyproject.toml': pyproject },
      { write: { 'pyproject.toml': changed } },
    );
    const checkout = checkoutOf(workspace, checkpoint);
    expect(await restoreGateEntrypoints(workspace, checkout, base, checkpoint, PYTEST)).toEqual([
      'pyproject.toml#tool.pytest',
    ]);
    expect(read(checkout, 'pyproject.toml')).toBe(pyproject.replace('"requests"', '"requests", "httpx"'));
  });

  it('restores nothing when the maker changed only code', async () => {
    const { workspace, base, checkpoint } = history(
      { 'package.json': JEST_PACKAGE, 'src/a.js': '1;\n' },
      { write: { 'src/a.js': '2;\n', 'src/a.test.js': 'test("a", () => {});\n' } },
    );
    const checkout = checkoutOf(workspace, checkpoint);
    expect(await restoreGateEntrypoints(workspace, checkout, base, checkpoint, NPM_TEST)).toEqual([]);
    expect(git(checkout, 'status', '--porcelain')).toBe('');
  });

  (process.getuid?.() === 0 ? it : it.skip)(
    'gives restored files and the directories git creates the owner of their directory',
    async () => {
      const config = lines("module.exports = { testEnvironment: 'node' };");
      const { workspace, base, checkpoint } = history(
        { 'package.json': JEST_PACKAGE, 'config/jest.config.js': config },
        { remove: ['config'] },
      );
      const checkout = checkoutOf(workspace, checkpoint);
      execFileSync('chown', ['-R', '4321:4321', '--', checkout]);
      await restoreGateEntrypoints(workspace, checkout, base, checkpoint, [
        gate(['npx', 'jest', '-c', 'config/jest.config.js']),
      ]);
      for (const file of ['config', 'config/jest.config.js']) {
        const stat = fs.lstatSync(path.join(checkout, file));
        expect([stat.uid, stat.gid]).toEqual([4321, 4321]);
      }
    },
  );
});
