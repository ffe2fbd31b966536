import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PYTEST_VERSION } from './real-projects';

// Real test runners for tests that run them: jest and vitest from the npm registry, pytest from PyPI,
// installed once per version under os.tmpdir() and shared by every test and every run after it. Test
// projects link them in (node_modules, a venv's python); sandboxed commands get the directory
// read-only. A directory counts as installed only once its marker exists, so an interrupted install
// is redone.

export const JEST_VERSION = '29.7.0';
// vitest 4+ needs Node 22; the service supports Node 20.
export const VITEST_VERSION = '3.2.4';

export const RUNNER_PACKAGES_ROOT = path.join(os.tmpdir(), 'engineering-loop-runner-packages');

/** node_modules holding jest and vitest. */
export function nodeRunnerModules(): string {
  const dir = installedOnce(`node-jest-${JEST_VERSION}-vitest-${VITEST_VERSION}`, (dir) => {
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'runner-packages', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', `jest@${JEST_VERSION}`, `vitest@${VITEST_VERSION}`], { cwd: dir, stdio: 'pipe', timeout: 300_000 });
  });
  return path.join(dir, 'node_modules');
}

/** The python of a venv with pytest installed. */
export function pytestPython(): string {
  const dir = installedOnce(`python-pytest-${PYTEST_VERSION}`, (dir) => {
    execFileSync('python3', ['-m', 'venv', path.join(dir, 'venv')], { stdio: 'pipe', timeout: 120_000 });
    execFileSync(path.join(dir, 'venv/bin/python'), ['-m', 'pip', 'install', '--quiet', `pytest==${PYTEST_VERSION}`], { stdio: 'pipe', timeout: 300_000 });
  });
  return path.join(dir, 'venv/bin/python');
}

function installedOnce(name: string, install: (dir: string) => void): string {
  const dir = path.join(RUNNER_PACKAGES_ROOT, name);
  const marker = path.join(dir, '.installed');
  if (!fs.existsSync(marker)) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    install(dir);
    fs.writeFileSync(marker, '');
  }
  return dir;
}
