import { z } from 'zod';
import { argvSchema } from './argv';

// Set-up (issue 9): installing a repository's dependencies before the maker works and before the gates
// run. Commands come from the most specific layer, like gates: the request's `setup` → the repository's
// `.ai-engineering-loop/verification.json` `setup` → inference from lockfiles and manifests.

/** A set-up command may take longer than a gate (a cold dependency install), never forever. */
export const MAX_SETUP_TIMEOUT_SECONDS = 1800;
export const DEFAULT_SETUP_TIMEOUT_SECONDS = 600;

export const setupCommandSchema = z.strictObject({
  /** Run without a shell, from the repository root, with network. */
  argv: argvSchema,
  timeoutSeconds: z.number().int().min(1).max(MAX_SETUP_TIMEOUT_SECONDS).default(DEFAULT_SETUP_TIMEOUT_SECONDS),
});
export type SetupCommand = z.infer<typeof setupCommandSchema>;

export const SETUP_SOURCES = ['contract', 'repository-config', 'manifest-inference'] as const;
export type SetupSource = (typeof SETUP_SOURCES)[number];

export interface ResolvedSetupCommand {
  argv: string[];
  timeoutSeconds: number;
  source: SetupSource;
  /** Human-readable provenance, e.g. "package-lock.json (npm ci)". */
  detail: string;
}

/** Resolved once from the base commit, beside the gate plan. */
export interface SetupPlan {
  commands: ResolvedSetupCommand[];
  /** Work-dir-relative paths the set-up creates; never part of a checkpoint. */
  outputs: string[];
  /** Work-dir-relative bin directories put first on PATH for gates and the maker (a Python venv). */
  binDirs: string[];
  /** Package managers run through corepack (pnpm, yarn): they get a persistent COREPACK_HOME and shims. */
  corepack: string[];
  notes: string[];
}

export const NO_SETUP: SetupPlan = { commands: [], outputs: [], binDirs: [], corepack: [], notes: [] };

/**
 * Files whose change means the dependencies must be installed again: a maker that edits one makes the
 * maker's workspace set up again (the verification checkout is set up on every verification anyway).
 */
export const SETUP_INPUT_FILES = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  'yarn.lock',
  '.yarnrc.yml',
  'bun.lock',
  'bun.lockb',
  'pyproject.toml',
  'poetry.lock',
  'uv.lock',
  'setup.py',
  'setup.cfg',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'libs.versions.toml',
  '.ai-engineering-loop/verification.json',
];

export function touchesSetupInputs(changedFiles: readonly string[]): boolean {
  return changedFiles.some((file) => {
    const base = file.split('/').pop() ?? file;
    return (
      SETUP_INPUT_FILES.includes(file) || SETUP_INPUT_FILES.includes(base) || /^requirements[^/]*\.txt$/.test(base)
    );
  });
}

/**
 * What tools, set-up and gates create and a checkpoint must never carry, whether or not the repository
 * ignores it (written to the workspace's .git/info/exclude, which only affects untracked files: edits to
 * tracked files under these paths are still committed).
 */
export const SERVICE_EXCLUDES = [
  'node_modules/',
  '.venv/',
  'venv/',
  '__pycache__/',
  '*.pyc',
  '.pytest_cache/',
  '.tox/',
  '.nox/',
  '.mypy_cache/',
  '.ruff_cache/',
  '.hypothesis/',
  '*.egg-info/',
  'target/',
  'coverage/',
  '.nyc_output/',
  '.gradle/',
  '.pnpm-store/',
  '.yarn/install-state.gz',
  '.engineering-loop/',
];

/** The ESCALATE trigger for a problem of the machine, not of the code: the report quotes this much output. */
export const ENVIRONMENT_OUTPUT_TAIL_CHARS = 2000;

/** The last `max` characters of a command's output, for a report. */
export function outputTail(text: string, max = ENVIRONMENT_OUTPUT_TAIL_CHARS): string {
  const trimmed = text.trimEnd();
  return trimmed.length <= max ? trimmed : `…${trimmed.slice(-max)}`;
}
