import { createHash } from 'node:crypto';
import path from 'node:path';
import { touchesSetupInputs, type SetupPlan } from '../../domain/setup';

// What decides a verification set-up's result, as one key (pure: the files are read by snapshot-inputs.ts).
// Two checkouts with the same key get the same dependencies from the same set-up: the repository, the
// set-up plan (commands, outputs, PATH additions), every manifest, lockfile and package-manager config the
// checkout tracks, the files the commands name, and the tools they run (path, size and change time).

/** Package-manager and toolchain config read at install time, besides SETUP_INPUT_FILES. */
const CONFIG_FILES = new Set([
  '.npmrc',
  '.yarnrc',
  'pip.conf',
  'tox.ini',
  'noxfile.py',
  'MANIFEST.in',
  '.python-version',
  '.nvmrc',
  '.node-version',
  '.tool-versions',
]);

/**
 * Set-up outputs the gates rebuild themselves from the checkout's source (Maven's target/, Gradle's build/):
 * never kept, since a copy would be compiled from an older checkpoint's source.
 */
export const REBUILT_OUTPUTS = new Set(['target', 'build', '.gradle']);

/** npm lifecycle scripts that run at install: what they write depends on more than the key says. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'];

export interface KeyedFile {
  path: string;
  content: Buffer;
}

export interface ToolFingerprint {
  name: string;
  /** Real path, size and change time; null when not on PATH. */
  identity: string | null;
}

export interface SnapshotKeyInputs {
  repoUrl: string;
  plan: SetupPlan;
  files: readonly KeyedFile[];
  tools: readonly ToolFingerprint[];
}

/** Whether a tracked file of the checkout is part of the key. */
export function keyedFile(file: string, plan: SetupPlan): boolean {
  const base = path.posix.basename(file);
  if (file.split('/').some((part) => part === 'node_modules' || part === '.venv' || part === 'venv')) return false;
  return touchesSetupInputs([file]) || CONFIG_FILES.has(base) || namedByCommands(plan).has(file);
}

/** Relative paths a set-up command names (`pip install -r requirements/test.txt`), normalised. */
function namedByCommands(plan: SetupPlan): Set<string> {
  const named = new Set<string>();
  for (const command of plan.commands)
    for (const arg of command.argv.slice(1)) {
      const value = arg.includes('=') && arg.startsWith('-') ? arg.slice(arg.indexOf('=') + 1) : arg;
      if (value && !value.startsWith('-') && !path.posix.isAbsolute(value)) named.add(path.posix.normalize(value));
    }
  return named;
}

/** The tools a plan runs by name (looked up on PATH), with the runtimes package managers run on. */
export function keyedTools(plan: SetupPlan): string[] {
  const names = new Set(['node', 'python3', 'java']);
  for (const command of plan.commands) {
    const tool = command.argv[0];
    if (tool && !tool.includes('/')) names.add(tool);
  }
  return [...names].sort();
}

export function snapshotKey(inputs: SnapshotKeyInputs): string {
  const hash = createHash('sha256');
  const field = (text: string) => hash.update(`${Buffer.byteLength(text)}\0${text}`);
  field(inputs.repoUrl);
  const { commands, outputs, binDirs, corepack } = inputs.plan;
  field(JSON.stringify({ commands: commands.map((c) => c.argv), outputs, binDirs, corepack }));
  for (const file of [...inputs.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    field(file.path);
    hash.update(`${file.content.length}\0`);
    hash.update(file.content);
  }
  for (const tool of inputs.tools) field(`${tool.name}=${tool.identity ?? 'missing'}`);
  return hash.digest('hex').slice(0, 24);
}

/**
 * Why this set-up's result cannot be kept for a later checkout, or null when it can: a package.json whose
 * install scripts (`prepare`: a build) write from source files outside the key, or outputs that are not
 * installed dependencies (yarn's Plug'n'Play files name their cache by absolute path).
 */
export function notKeepable(plan: SetupPlan, packageJsons: readonly KeyedFile[]): string | null {
  if (plan.commands.length === 0) return 'no set-up commands';
  const other = plan.outputs.filter((o) => !keptOutput(o) && !REBUILT_OUTPUTS.has(o.replace(/\/$/, '')));
  if (other.length) return `set-up makes ${other.join(', ')}, which is not kept`;
  for (const file of packageJsons) {
    const scripts = scriptsOf(file.content);
    const running = INSTALL_SCRIPTS.filter((s) => typeof scripts[s] === 'string');
    if (running.length) return `${file.path} runs ${running.join(', ')} at install`;
  }
  return null;
}

/** Installed-dependency directories: the only outputs a snapshot holds. */
export function keptOutput(output: string): boolean {
  return ['node_modules', '.venv', 'venv'].includes(output.replace(/\/$/, ''));
}

function scriptsOf(content: Buffer): Record<string, unknown> {
  try {
    const pkg = JSON.parse(content.toString('utf8')) as { scripts?: unknown };
    return pkg.scripts && typeof pkg.scripts === 'object' ? (pkg.scripts as Record<string, unknown>) : {};
  } catch {
    // An unreadable package.json is in the key; npm fails on it the same way every time.
    return {};
  }
}
