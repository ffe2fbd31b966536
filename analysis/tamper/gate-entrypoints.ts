import { escape, Minimatch } from 'minimatch';
import path from 'node:path';
import type { ResolvedGate } from '../../domain/gates';

// What each gate command reads besides the code under test: the script it runs, the package.json
// scripts it names (followed through `npm run x` chains), the config, setup files and transpiler
// config of the tools it invokes, the modules a file could shadow, and what every gate reads (the
// repository's gate config, package-manager rc files, the directories on its PATH). Adding, changing
// or deleting any of these changes what the gate proves.

/** Each map goes from an entrypoint to the gate that reads it, e.g. "tests gate (npm test)". */
export interface GateEntrypoints {
  /** Workspace-relative globs of files a gate runs or configures itself from. */
  files: Map<string, string>;
  /** package.json key paths a gate reads (`scripts.test`, `jest`), joined with '.'. */
  packageKeys: Map<string, string>;
  /** INI/TOML sections a gate reads from a shared file, keyed `file#section`. */
  sections: Map<string, string>;
  /** Tools the gates run (`jest`, `pytest`): their base configs name more entrypoints (config-references.ts). */
  tools: Map<string, string>;
}

type ToolConfig = {
  files?: string[];
  packageKeys?: string[];
  sections?: [file: string, section: string][];
  modules?: string[];
};

const TSC: ToolConfig = { files: ['**/tsconfig*.json'] };
/**
 * What the JUnit Platform reads besides the tests, in Maven and Gradle builds alike: its configuration
 * (deactivated conditions, extension autodetection) and the listeners, post-discovery filters and
 * extensions registered through the service loader, which can drop or pass any test.
 */
const JUNIT_PLATFORM = ['**/junit-platform.properties', '**/META-INF/services/org.junit.*'];
/**
 * Maven reads `.mvn/` (maven.config's options, jvm.config, extensions.xml's core extensions, the
 * wrapper) and the wrapper scripts; every pom.xml outside its dependencies is added from the base
 * tree (jvm-build-files.ts, build-file-views.ts).
 */
const MAVEN: ToolConfig = { files: ['**/.mvn/**', '**/mvnw', '**/mvnw.cmd', ...JUNIT_PLATFORM] };
/**
 * Gradle reads settings scripts, gradle.properties, the wrapper, buildSrc and every script a build
 * applies (`apply from: 'gradle/test.gradle'`), whole, and the version catalog's plugins; build.gradle
 * and build.gradle.kts outside their dependencies, and included builds, come from the base tree
 * (jvm-build-files.ts).
 */
const GRADLE: ToolConfig = {
  files: [
    '**/settings.gradle',
    '**/settings.gradle.kts',
    '**/gradle.properties',
    '**/gradle/wrapper/**',
    '**/gradlew',
    '**/gradlew.bat',
    '**/buildSrc/**',
    '**/!(build).gradle',
    '**/!(build).gradle.kts',
    ...JUNIT_PLATFORM,
  ],
  sections: [['gradle/libs.versions.toml', 'plugins']],
};
/** jest and mocha compile tests through babel when it is configured (@swc/jest through swc). */
const TRANSPILERS = ['**/babel.config.*', '**/.babelrc', '**/.babelrc.*', '**/.swcrc'];
const TOOL_CONFIGS: Record<string, ToolConfig> = {
  jest: {
    files: ['**/jest.config.*', '**/jest.setup.*', '**/jest-setup.*', ...TRANSPILERS],
    packageKeys: ['jest', 'babel'],
  },
  vitest: {
    files: [
      '**/vitest.config.*',
      '**/vitest.workspace.*',
      '**/vite.config.*',
      '**/vitest.setup.*',
      '**/vitest-setup.*',
    ],
  },
  mocha: { files: ['**/.mocharc*', ...TRANSPILERS], packageKeys: ['mocha', 'babel'] },
  tsc: TSC,
  'vue-tsc': TSC,
  eslint: { files: ['**/.eslintrc*', '**/eslint.config.*', '**/.eslintignore'], packageKeys: ['eslintConfig'] },
  pytest: {
    // pytest collects conftest.py files (fixtures, hooks, plugins) from every directory it visits.
    files: ['**/pytest.ini', '**/.pytest.ini', '**/conftest.py'],
    sections: [
      ['pyproject.toml', 'tool.pytest'],
      ['setup.cfg', 'tool:pytest'],
      ['tox.ini', 'pytest'],
    ],
    modules: ['pytest', '_pytest', 'pluggy', 'unittest'],
  },
  mypy: {
    files: ['**/mypy.ini', '**/.mypy.ini'],
    sections: [
      ['pyproject.toml', 'tool.mypy'],
      ['setup.cfg', 'mypy'],
    ],
    modules: ['mypy'],
  },
  ruff: { files: ['**/ruff.toml', '**/.ruff.toml'], sections: [['pyproject.toml', 'tool.ruff']], modules: ['ruff'] },
  flake8: {
    files: ['**/.flake8'],
    sections: [
      ['setup.cfg', 'flake8'],
      ['tox.ini', 'flake8'],
    ],
    modules: ['flake8'],
  },
  tox: {
    files: ['tox.ini'],
    sections: [
      ['pyproject.toml', 'tool.tox'],
      ['setup.cfg', 'tox:tox'],
    ],
    modules: ['tox'],
  },
  'golangci-lint': { files: ['**/.golangci.*'] },
  clippy: { files: ['**/clippy.toml', '**/.clippy.toml'], sections: [['Cargo.toml', 'lints']] },
  // Cargo's config can swap the test runner, the compiler wrapper or the target dir for the gate.
  cargo: { files: ['**/.cargo/config.toml', '**/.cargo/config'] },
  // .yarnrc.yml's yarnPath names the yarn release that runs the script; plugins run inside it.
  yarn: { files: ['.yarn/releases/**', '.yarn/plugins/**'] },
  bun: { files: ['**/bunfig.toml'] },
  mvn: MAVEN,
  mvnw: MAVEN,
  gradle: GRADLE,
  gradlew: GRADLE,
};

/** What every gate reads, whichever tools it runs; each reason completes "read by the …". */
const ALWAYS: [glob: string, reason: string][] = [
  // docs/design.md §3.2: the repository's own gate configuration steers every gate.
  ['.ai-engineering-loop/**', 'repository gate configuration'],
  ...['**/.npmrc', '**/.yarnrc', '**/.yarnrc.yml', '**/pip.conf', '**/pip.ini'].map((glob): [string, string] => [
    glob,
    'package manager of every gate and set-up command',
  ]),
  // npm puts every node_modules/.bin up the tree first on a script's PATH; set-up puts the venv's bin first.
  ['**/node_modules/.bin/**', "shell, as a directory on the gates' PATH"],
  ['.venv/bin/**', "shell, as a directory on the gates' PATH"],
  // Python imports installed modules and runs .pth files only from site directories; `.pth` elsewhere
  // (model weights often use the suffix) is inert.
  ['**/site-packages/**', 'Python interpreter, as an installed module'],
  ['**/sitecustomize.py', 'Python interpreter at start-up'],
  ['**/usercustomize.py', 'Python interpreter at start-up'],
];

const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
/** Project managers whose `run` runs the command after it in the project's environment: `uv run pytest`. */
const PYTHON_RUNNERS = new Set(['uv', 'poetry', 'pdm', 'hatch', 'pipenv']);
/** `python`, `python3`, `python3.12`. */
const PYTHONS = /^python(?:\d+(?:\.\d+)?)?$/;
const INTERPRETERS = new Set(['node', 'nodejs', 'bash', 'sh', 'zsh', 'dash', 'ruby', 'perl', 'php', 'tsx', 'ts-node']);
/** Words that only prefix the real command. */
const WRAPPERS = new Set(['env', 'cross-env', 'npx', 'pnpx', 'bunx', 'exec', 'time', 'nice']);
/** Interpreter flags after which no script file follows: `python -m pytest`, `bash -c '…'`, `node --test a.test.js`. */
const NO_SCRIPT_FLAGS = new Set(['-m', '-c', '-e', '--eval', '--test']);
/** Interpreter flags that take a value before the script: `node -r ts-node/register x.js`. */
const VALUE_FLAGS = new Set(['-r', '--require', '--import', '--loader']);
/** Flags naming a config file: `eslint -c x`, `tsc -p tsconfig.build.json`, `jest --config=x`. */
const CONFIG_FLAG = /^(?:-c|-p|--config|--project|--config-file|--rcfile)(?:=(.+))?$/;
/** Flags naming a file the runner loads first: `mocha --require ./test/setup.js`, `jest --setupFiles x`. */
const PRELOAD_FLAG =
  /^(?:-r|--require|--import|--loader|--file|--setupFiles|--setupFilesAfterEnv|--globalSetup|--globalTeardown|--testEnvironment)(?:=(.+))?$/;
/** A flag value that names a file rather than a package (`ts-node/register`) or an option (`-rA`). */
const FILE_LIKE = /^\.\.?\/|\.(?:[cm]?[jt]sx?|py)$/;
const MAKEFILES = ['Makefile', 'makefile', 'GNUmakefile'];

export function gateEntrypoints(
  workspace: string,
  gates: ResolvedGate[],
  scripts: Record<string, unknown>,
): GateEntrypoints {
  const found: GateEntrypoints = { files: new Map(), packageKeys: new Map(), sections: new Map(), tools: new Map() };
  const add = (map: Map<string, string>, key: string, reason: string) => {
    if (!map.has(key)) map.set(key, reason);
  };
  const addFile = (file: string | undefined, reason: string) => {
    const relative = file && path.posix.normalize(path.isAbsolute(file) ? path.relative(workspace, file) : file);
    if (relative && !relative.startsWith('..') && !path.isAbsolute(relative))
      add(found.files, literalGlob(relative), reason);
  };
  const addShadows = (module: string | undefined, reason: string) => {
    if (module && PYTHON_MODULE.test(module)) shadowGlobs(module).forEach((glob) => add(found.files, glob, reason));
  };
  const followed = new Set<string>();

  const visit = (command: string[], reason: string) => {
    const words = withoutWrappers(command);
    const program = words[0];
    if (!program) return;
    const name = path.posix.basename(program);
    const args = words.slice(1);
    if (program.includes('/')) addFile(program, reason);

    const tools = words.map((word) => path.posix.basename(word)).filter((word) => Object.hasOwn(TOOL_CONFIGS, word));
    for (const toolName of tools) {
      const tool = TOOL_CONFIGS[toolName]!;
      add(found.tools, toolName, reason);
      tool.files?.forEach((glob) => add(found.files, glob, reason));
      tool.packageKeys?.forEach((key) => add(found.packageKeys, key, reason));
      tool.sections?.forEach(([file, section]) => add(found.sections, `${file}#${section}`, reason));
      tool.modules?.forEach((module) => addShadows(module, reason));
    }
    args.forEach((word, i) => {
      const config = CONFIG_FLAG.exec(word);
      if (config) addFile(config[1] ?? args[i + 1], reason);
      const preload = PRELOAD_FLAG.exec(word);
      const value = preload && (preload[1] ?? args[i + 1]);
      if (value && FILE_LIKE.test(value)) addFile(value, reason);
      // `pytest -p plugin` loads a module, which a file on sys.path would shadow.
      if (word === '-p' && tools.includes('pytest')) addShadows(args[i + 1], reason);
    });

    if (name === 'make' || name === 'gmake') {
      MAKEFILES.forEach((file) => addFile(file, reason));
      args.forEach((word, i) => {
        if (word === '-f') addFile(args[i + 1], reason);
      });
    }
    if (INTERPRETERS.has(name) || PYTHONS.test(name)) addFile(interpretedScript(args), reason);
    // `python -m x` imports x from sys.path, whose first entry is the working directory.
    if (PYTHONS.test(name) && args.includes('-m')) addShadows(args[args.indexOf('-m') + 1], reason);
    if (PYTHON_RUNNERS.has(name) && args[0] === 'run') visit(args.slice(1), reason);
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
  ALWAYS.forEach(([glob, reason]) => add(found.files, glob, reason));
  return found;
}

/** Tells why a file is a gate entrypoint (undefined when no gate reads it); the globs are compiled once. */
export function entrypointMatcher(entrypoints: GateEntrypoints): (file: string) => string | undefined {
  const globs = [...entrypoints.files].map(([glob, reason]) => ({ glob: new Minimatch(glob, { dot: true }), reason }));
  return (file) => globs.find(({ glob }) => glob.match(file))?.reason;
}

/** A glob matching exactly `file`, whatever characters its name holds. */
export function literalGlob(file: string): string {
  return escape(file, { magicalBraces: true });
}

export const PYTHON_MODULE = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/;

/**
 * Files that would be imported instead of the installed `module`: any directory can end up on sys.path
 * (the working directory, `src/`, pytest's rootdir insertion), and only the name is unusual enough to
 * protect everywhere. A directory without `__init__.py` is a namespace package, which an installed
 * module outranks.
 */
function shadowGlobs(module: string): string[] {
  const file = module.replace(/\./g, '/');
  return [`**/${file}.py`, `**/${file}.pyc`, `**/${file}/__init__.py`, `**/${file}/__init__.pyc`];
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
  if (manager === 'npm')
    return ['test', 't', 'tst'].includes(first) ? 'test' : ['start', 'stop', 'restart'].includes(first) ? first : null;
  // `bun test` is bun's own runner; pnpm and yarn run scripts by bare name (`pnpm lint`).
  if (manager === 'bun' && first === 'test') return null;
  return first === 'test' || Object.hasOwn(scripts, first) ? first : null;
}

/** Commands inside a package.json script, split on shell operators; quoting is only stripped, not parsed. */
function shellCommands(script: string): string[][] {
  return script
    .split(/&&|\|\||[;|&]/)
    .map((part) =>
      part
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((word) => word.replace(/^(['"])(.*)\1$/, '$2')),
    )
    .filter((words) => words.length > 0);
}
