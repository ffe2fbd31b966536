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
]);

const MAX_LISTED = 50;

/** Ignored paths in the workspace that no tool is known to produce, at most MAX_LISTED. */
export async function leftBehindFiles(workspace: string): Promise<string[]> {
  const paths = await ignoredPaths(workspace);
  return paths
    .filter((p) => !p.split('/').some((part) => TOOL_OUTPUT.has(part)) && !/\.(pyc|pyo|log|tsbuildinfo)$/.test(p))
    .map((p) => p.replace(/\/$/, ''))
    .filter((p) => p !== '' && !path.isAbsolute(p))
    .slice(0, MAX_LISTED);
}
