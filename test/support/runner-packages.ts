import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PYTEST_VERSION } from './real-projects';

// The one place tests get real test runners and checkers from: jest, vitest, typescript and eslint from
// the npm registry into one node_modules, pytest, mypy and ruff from PyPI into one venv, installed once
// per version set (and Node, Python, platform) under os.tmpdir() and shared by every test and every run
// after it. On a fresh machine the first test that asks installs them; the rest of the run reuses them.
//
// The install goes to a directory of its own and is renamed into place only when complete, so a
// directory that exists is whole: an interrupted install leaves only its temporary directory behind,
// and two jest runs installing at once both finish, the second rename losing to the first.
//
// Users: test-reporter.test.ts links node_modules into its projects (turbo and nx included) and runs the venv's python;
// gaming-projects.ts puts both bin directories on the e2e worker's PATH. Sandboxed commands get the
// directory read-only.

/** The version the service's own devDependencies use. */
export const JEST_VERSION = '30.2.0';
// vitest 4+ needs Node 22; the service supports Node 20.
export const VITEST_VERSION = '3.2.4';
const NPM_PACKAGES = [
  `jest@${JEST_VERSION}`,
  `vitest@${VITEST_VERSION}`,
  'typescript@5.9.3',
  'eslint@9.39.1',
  // A jest project on TypeScript with path aliases (ts-jest, whose type check needs jest's types), and mocha.
  'ts-jest@29.4.15',
  '@types/jest@30.0.0',
  'mocha@11.8.0',
  // What composite tests scripts run their runners through (test-reporter.test.ts).
  'npm-run-all2@8.0.4',
  'concurrently@9.2.5',
  'turbo@2.11.13',
  'nx@24.0.7',
];
const PYTHON_PACKAGES = [`pytest==${PYTEST_VERSION}`, 'mypy==1.13.0', 'ruff==0.8.4'];

const RUNNER_PACKAGES_ROOT = path.join(os.tmpdir(), 'engineering-loop-runner-packages');
const READY = 'ready';

export interface RunnerPackages {
  /** Holds everything below; what a sandbox mounts read-only. */
  dir: string;
  /** node_modules with the npm packages; its .bin holds jest, vitest, tsc, eslint, mocha, run-s, concurrently, turbo, nx. */
  nodeModules: string;
  /** The venv's python, with the Python packages. */
  python: string;
  /** The directories with the tools' commands, for PATH: node_modules/.bin, then the venv's bin. */
  bin: string[];
}

let installed: RunnerPackages | undefined;

/** The runners and checkers, installed first if this machine does not have this version set yet. */
export function runnerPackages(): RunnerPackages {
  if (installed) return installed;
  const python = execFileSync('python3', ['--version'], { encoding: 'utf8' }).trim();
  const key = createHash('sha256')
    .update(JSON.stringify([NPM_PACKAGES, PYTHON_PACKAGES, process.version, python, process.platform, process.arch]))
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(RUNNER_PACKAGES_ROOT, key);
  if (!fs.existsSync(path.join(dir, READY))) install(dir);
  installed = {
    dir,
    nodeModules: path.join(dir, 'node_modules'),
    python: path.join(dir, 'venv/bin/python'),
    bin: [path.join(dir, 'node_modules/.bin'), path.join(dir, 'venv/bin')],
  };
  return installed;
}

function install(dir: string): void {
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  fs.writeFileSync(path.join(tmp, 'package.json'), '{ "name": "runner-packages", "private": true }\n');
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: tmp, stdio: 'pipe', timeout: 600_000 });
  // No install scripts: the packages' binaries come as platform packages (esbuild, rollup).
  run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts', ...NPM_PACKAGES]);
  // The venv is used through its python (and bin/ on PATH, whose python3 is a symlink to the system's),
  // never through its console scripts, whose #! lines name the temporary path: it may be renamed.
  run('python3', ['-m', 'venv', 'venv']);
  run('venv/bin/python', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...PYTHON_PACKAGES]);
  fs.writeFileSync(path.join(tmp, READY), '');
  try {
    fs.renameSync(tmp, dir);
  } catch (error) {
    // Another run renamed its install into place first: use that one.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, READY))) throw error;
  }
}
