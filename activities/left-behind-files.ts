import path from 'node:path';
import { ignoredPaths } from './git';

// Files the maker left in its workspace that git ignores never reach a checkpoint, so they cannot
// change what the gates see (those run on a clean checkout). They are still worth a person's look: a
// `conftest.py` or a runner config hidden behind an ignore pattern is an attempt to steer verification.
// What tools produce on their own (dependencies, caches, build output) is not listed.

const TOOL_OUTPUT = new Set([
  'node_modules',
  '.npm',
  '.pnpm-store',
  '.yarn',
  '__pycache__',
  '.pytest_cache',
  '.mypy_cache',
  '.ruff_cache',
  '.tox',
  '.venv',
  'venv',
  '.cache',
  'target',
  'dist',
  'build',
  'out',
  'coverage',
  '.coverage',
  '.nyc_output',
  '.next',
  '.gradle',
  '.idea',
  '.vscode',
  '.DS_Store',
  '.eggs',
  '.hypothesis',
  'htmlcov',
  '.turbo',
  // Lockfiles an install writes, which libraries often ignore (cargo build, npm install, poetry lock).
  'Cargo.lock',
  'package-lock.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'poetry.lock',
  'Pipfile.lock',
  'uv.lock',
]);

/** Also tool output, by name: pip's metadata of an editable install (`shop.egg-info/`), compiled and log files. */
const TOOL_OUTPUT_NAMES = /\.egg-info$|\.(pyc|pyo|log|tsbuildinfo)$/;

const MAX_LISTED = 50;

/** Ignored paths in the workspace that no tool is known to produce, at most MAX_LISTED. */
export async function leftBehindFiles(workspace: string): Promise<string[]> {
  const paths = await ignoredPaths(workspace);
  return paths
    .map((p) => p.replace(/\/$/, ''))
    .filter((p) => !p.split('/').some((part) => TOOL_OUTPUT.has(part) || TOOL_OUTPUT_NAMES.test(part)))
    .filter((p) => p !== '' && !path.isAbsolute(p))
    .slice(0, MAX_LISTED);
}
