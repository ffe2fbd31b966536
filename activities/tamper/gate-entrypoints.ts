import { escape } from 'minimatch';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';

// What each gate command reads: the script it runs, the package.json scripts it names (followed
// through `npm run x` chains), and the config files of the tools it invokes. A change to any of
// these changes what the gate proves.

/** Each map goes from an entrypoint to the gate that reads it, e.g. "tests gate (npm test)". */
export interface GateEntrypoints {
  /** Workspace-relative globs of files a gate runs or configures itself from. */
  files: Map<string, string>;
  /** package.json key paths a gate reads (`scripts.test`, `jest`), joined with '.'. */
  packageKeys: Map<string, string>;
  /** INI/TOML sections a gate reads from a shared file, keyed `file#section`. */
  sections: Map<string, string>;
}

type ToolConfig = { files?: string[]; packageKeys?: string[]; sections?: [file: string, section: string][] };

const TSC: ToolConfig = { files: ['**/tsconfig*.json'] };
const TOOL_CONFIGS: Record<string, ToolConfig> = {
  jest: { files: ['**/jest.config.*'], packageKeys: ['jest'] },
  vitest: { files: ['**/vitest.config.*', '**/vitest.workspace.*', '**/vite.config.*'] },
  mocha: { files: ['**/.mocharc*'], packageKeys: ['mocha'] },
  tsc: TSC,
  'vue-tsc': TSC,
  eslint: { files: ['**/.eslintrc*', '**/eslint.config.*', '**/.eslintignore'], packageKeys: ['eslintConfig'] },
  pytest: {
    files: ['**/pytest.ini'],
    sections: [['pyproject.toml', 'tool.pytest'], ['setup.cfg', 'tool:pytest'], ['tox.ini', 'pytest']],
  },
  mypy: { files: ['**/mypy.ini', '**/.mypy.ini'], sections: [['pyproject.toml', 'tool.mypy'], ['setup.cfg', 'mypy']] },
  ruff: { files: ['**/ruff.toml', '**/.ruff.toml'], sections: [['pyproject.toml', 'tool.ruff']] },
  flake8: { files: ['**/.flake8'], sections: [['setup.cfg', 'flake8'], ['tox.ini', 'flake8']] },
  tox: { files: ['tox.ini'] },
  'golangci-lint': { files: ['**/.golangci.*'] },
  clippy: { files: ['**/clippy.toml', '**/.clippy.toml'], sections: [['Cargo.toml', 'lints']] },
  // Cargo's config can swap the test runner, the compiler wrapper or the target dir for the gate.
  cargo: { files: ['**/.cargo/config.toml', '**/.cargo/config'] },
};

/** The repository's own gate configuration (SPEC §3.2) steers every gate. */
const LOOP_CONFIG = ['.ai-engineering-loop/verification.json', '.ai-engineering-loop/verification.md'];

const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const INTERPRETERS = new Set(['node', 'nodejs', 'bash', 'sh', 'zsh', 'dash', 'python', 'python3', 'ruby', 'perl', 'php', 'tsx', 'ts-node']);
/** Words that only prefix the real command. */
const WRAPPERS = new Set(['env', 'cross-env', 'npx', 'pnpx', 'bunx', 'exec', 'time', 'nice']);
/** Interpreter flags after which no script file follows: `python -m pytest`, `bash -c '…'`, `node --test a.test.js`. */
const NO_SCRIPT_FLAGS = new Set(['-m', '-c', '-e', '--eval', '--test']);
/** Interpreter flags that take a value before the script: `node -r ts-node/register x.js`. */
const VALUE_FLAGS = new Set(['-r', '--require', '--import', '--loader']);
/** Flags naming a config file: `eslint -c x`, `tsc -p tsconfig.build.json`, `jest --config=x`. */
const CONFIG_FLAG = /^(?:-c|-p|--config|--project|--config-file|--rcfile)(?:=(.+))?$/;
const MAKEFILES = ['Makefile', 'makefile', 'GNUmakefile'];

export function gateEntrypoints(workspace: string, gates: ResolvedGate[], scripts: Record<string, unknown>): GateEntrypoints {
  const found: GateEntrypoints = { files: new Map(), packageKeys: new Map(), sections: new Map() };
  const add = (map: Map<string, string>, key: string, reason: string) => {
    if (!map.has(key)) map.set(key, reason);
  };
  const addFile = (file: string | undefined, reason: string) => {
    const relative = file && path.posix.normalize(path.isAbsolute(file) ? path.relative(workspace, file) : file);
    if (relative && !relative.startsWith('..') && !path.isAbsolute(relative)) add(found.files, escape(relative), reason);
  };
  const followed = new Set<string>();

  const visit = (command: string[], reason: string) => {
    const words = withoutWrappers(command);
    const program = words[0];
    if (!program) return;
    const name = path.posix.basename(program);
    const args = words.slice(1);
    if (program.includes('/')) addFile(program, reason);

    for (const word of words) {
      const tool = TOOL_CONFIGS[path.posix.basename(word)];
      tool?.files?.forEach((glob) => add(found.files, glob, reason));
      tool?.packageKeys?.forEach((key) => add(found.packageKeys, key, reason));
      tool?.sections?.forEach(([file, section]) => add(found.sections, `${file}#${section}`, reason));
    }
    args.forEach((word, i) => {
      const flag = CONFIG_FLAG.exec(word);
      if (flag) addFile(flag[1] ?? args[i + 1], reason);
    });

    if (name === 'make' || name === 'gmake') {
      MAKEFILES.forEach((file) => addFile(file, reason));
      args.forEach((word, i) => {
        if (word === '-f') addFile(args[i + 1], reason);
      });
    }
    if (INTERPRETERS.has(name)) addFile(interpretedScript(args), reason);
    if (PACKAGE_MANAGERS.has(name)) {
      const [subcommand, ...rest] = args.filter((a) => !a.startsWith('-'));
      if (subcommand === 'exec' || subcommand === 'dlx' || subcommand === 'x') visit(rest, reason);
      const script = scriptName(name, args, scripts);
      if (!script) return;
      // npm also runs the pre/post hooks around a script.
      for (const key of [`pre${script}`, script, `post${script}`]) add(found.packageKeys, `scripts.${key}`, reason);
      const body = scripts[script];
      if (typeof body === 'string' && !followed.has(script)) {
        followed.add(script);
        shellCommands(body).forEach((inner) => visit(inner, `${reason} → scripts.${script}`));
      }
    }
  };

  for (const gate of gates) visit(gate.argv, `${gate.gate} gate (${gate.argv.join(' ')})`);
  LOOP_CONFIG.forEach((file) => addFile(file, 'repository gate configuration'));
  return found;
}

function withoutWrappers(command: string[]): string[] {
  let start = 0;
  while (start < command.length) {
    const word = command[start]!;
    if (!/^\w+=/.test(word) && !word.startsWith('-') && !WRAPPERS.has(path.posix.basename(word))) break;
    start++;
  }
  return command.slice(start);
}

function interpretedScript(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (NO_SCRIPT_FLAGS.has(arg)) return undefined;
    if (VALUE_FLAGS.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** The package.json script a package-manager command runs, if any. */
function scriptName(manager: string, args: string[], scripts: Record<string, unknown>): string | null {
  const [first, second] = args.filter((a) => !a.startsWith('-'));
  if (!first) return null;
  if (first === 'run' || first === 'run-script') return second ?? null;
  if (manager === 'npm') return ['test', 't', 'tst'].includes(first) ? 'test' : ['start', 'stop', 'restart'].includes(first) ? first : null;
  // `bun test` is bun's own runner; pnpm and yarn run scripts by bare name (`pnpm lint`).
  if (manager === 'bun' && first === 'test') return null;
  return first === 'test' || Object.hasOwn(scripts, first) ? first : null;
}

/** Commands inside a package.json script, split on shell operators; quoting is only stripped, not parsed. */
function shellCommands(script: string): string[][] {
  return script
    .split(/&&|\|\||[;|&]/)
    .map((part) => part.trim().split(/\s+/).filter(Boolean).map((word) => word.replace(/^(['"])(.*)\1$/, '$2')))
    .filter((words) => words.length > 0);
}
