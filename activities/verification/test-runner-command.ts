import path from 'node:path';

// Which test runner a tests gate runs, and where arguments for it can go without changing what runs:
// into the gate's own argv (`npx jest`, `python -m pytest`, `node --test`, `go test ./...`), or after
// a package-manager command whose package.json script is one runner command (`npm test` with
// `"test": "jest"`). Anything less certain — composite scripts, pre/post hooks, flags before the
// script name, a `--` the runner would take as the end of its options — is not a runner command.

export type TestRunner = 'jest' | 'vitest' | 'node:test' | 'pytest' | 'go';

export interface RunnerCommand {
  runner: TestRunner;
  /** The runner's program and arguments, as the gate or its script has them (env prefixes and wrappers removed). */
  words: string[];
  /** Variables the command line sets itself before the runner (`env PYTEST_ADDOPTS=… pytest`). */
  assigned: string[];
  /**
   * The gate's argv with `args` put before the runner's word at `index` (after its last word by
   * default); null when they cannot go there (a script's runner only takes arguments at its end).
   */
  withArgs(args: string[], index?: number): string[] | null;
}

/** Words that only run the command after them; the flags they take come before it. */
const WRAPPERS = new Set(['env', 'cross-env', 'npx']);
/** Project managers whose `run` (or pnpm's `exec`) runs the command after it in the project's environment. */
const RUN_WRAPPERS = new Set(['uv', 'poetry', 'pdm', 'hatch', 'pipenv']);
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;
const PYTHON = /^python(?:\d+(?:\.\d+)?)?$/;
/** node flags whose value may be the next word. */
export const NODE_VALUE_FLAGS = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '--env-file',
  '--test-name-pattern',
  '--test-skip-pattern',
  '--test-reporter',
  '--test-reporter-destination',
  '--test-concurrency',
  '--test-timeout',
  '--test-shard',
]);
// In a package.json script, anything a shell would treat specially: a runner followed by `&&`, a pipe,
// a redirection or a substitution is not the command the appended arguments reach.
const SHELL_SYNTAX = /[;&|<>`$()\n\\]/;

export function runnerCommand(argv: string[], scripts: Record<string, unknown>): RunnerCommand | null {
  const { start, assigned } = prefixOf(argv);
  const command = argv.slice(start);
  const manager = path.posix.basename(command[0] ?? '');
  if (manager === 'npm' || manager === 'pnpm' || manager === 'yarn')
    return scriptCommand(argv, manager, command.slice(1), scripts, assigned);
  const runner = runnerOf(command);
  if (!runner) return null;
  return {
    runner,
    words: command,
    assigned,
    withArgs: (args, index = command.length) =>
      command.slice(0, index).includes('--')
        ? null
        : [...argv.slice(0, start), ...command.slice(0, index), ...args, ...command.slice(index)],
  };
}

/** Where the real command starts after `VAR=value` assignments and wrappers, and what they assign. */
function prefixOf(words: string[]): { start: number; assigned: string[] } {
  const assigned: string[] = [];
  let i = 0;
  while (i < words.length) {
    const word = words[i]!;
    const name = path.posix.basename(word);
    const assignment = ASSIGNMENT.exec(word);
    if (assignment) assigned.push(assignment[1]!);
    else if (RUN_WRAPPERS.has(name) && words[i + 1] === 'run') i++;
    else if (name === 'pnpm' && words[i + 1] === 'exec') i++;
    else if (!WRAPPERS.has(name) && !(i > 0 && word.startsWith('-'))) break;
    i++;
  }
  return { start: i, assigned };
}

function runnerOf(words: string[]): TestRunner | null {
  const [program = '', ...args] = words;
  const name = path.posix.basename(program);
  if (name === 'jest') return 'jest';
  // `vitest`, `vitest run …`, `vitest --run …`; not `vitest watch|bench|list|related …`.
  if (name === 'vitest') return args[0] === undefined || args[0] === 'run' || args[0].startsWith('-') ? 'vitest' : null;
  if (name === 'pytest' || name === 'py.test') return 'pytest';
  if (PYTHON.test(name) && args[0] === '-m' && args[1] === 'pytest') return 'pytest';
  if (name === 'go' && args[0] === 'test') return 'go';
  if (name === 'node' || name === 'nodejs') {
    const flags = nodeFlags(args);
    if (flags.includes('--test')) return 'node:test';
    // `node --experimental-vm-modules node_modules/jest/bin/jest.js`
    const file = args[flags.length] ?? '';
    if (path.posix.basename(file) === 'jest' || file.endsWith('jest/bin/jest.js')) return 'jest';
  }
  return null;
}

/** node's own flags, up to the script or test files: `--import tsx --test` takes `tsx` with it. */
function nodeFlags(args: string[]): string[] {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) i += NODE_VALUE_FLAGS.has(args[i]!) ? 2 : 1;
  return args.slice(0, i);
}

/**
 * A package manager running one script. Arguments reach the script after a `--` for npm and pnpm's
 * `test` (both strip it), and as they are after `pnpm run <script>` and yarn's script commands (which
 * would hand a `--` on to the script). bun, and flags before the script name, are left alone.
 */
function scriptCommand(
  argv: string[],
  manager: string,
  args: string[],
  scripts: Record<string, unknown>,
  assigned: string[],
): RunnerCommand | null {
  const call = scriptCall(manager, args);
  if (!call) return null;
  const { script, rest, stripsDashes } = call;
  let passed = rest;
  if (stripsDashes) {
    if (rest.length > 0 && rest[0] !== '--') return null;
    passed = rest.slice(1);
  }
  const body = scripts[script];
  // npm and yarn 1 run `pre<script>` and `post<script>` around it, which could run the runner too.
  if (
    typeof body !== 'string' ||
    SHELL_SYNTAX.test(body) ||
    scripts[`pre${script}`] !== undefined ||
    scripts[`post${script}`] !== undefined
  )
    return null;
  const bodyWords = body
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/^(['"])(.*)\1$/, '$2'));
  const prefix = prefixOf(bodyWords);
  const words = [...bodyWords.slice(prefix.start), ...passed];
  const runner = runnerOf(words);
  if (!runner || words.includes('--')) return null;
  const dashes = stripsDashes && rest.length === 0 ? ['--'] : [];
  return {
    runner,
    words,
    assigned: [...assigned, ...prefix.assigned],
    withArgs: (extra, index = words.length) => (index === words.length ? [...argv, ...dashes, ...extra] : null),
  };
}

function scriptCall(manager: string, args: string[]): { script: string; rest: string[]; stripsDashes: boolean } | null {
  const [first, second] = args;
  if (manager === 'npm' && (first === 'test' || first === 't' || first === 'tst'))
    return { script: 'test', rest: args.slice(1), stripsDashes: true };
  if (manager === 'npm' && (first === 'run' || first === 'run-script') && second)
    return { script: second, rest: args.slice(2), stripsDashes: true };
  if (manager === 'pnpm' && first === 'test') return { script: 'test', rest: args.slice(1), stripsDashes: true };
  if ((manager === 'pnpm' || manager === 'yarn') && first === 'run' && second)
    return { script: second, rest: args.slice(2), stripsDashes: false };
  if (manager === 'yarn' && first && !first.startsWith('-'))
    return { script: first, rest: args.slice(1), stripsDashes: false };
  return null;
}
