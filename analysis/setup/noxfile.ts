import { logicalLines, type LogicalLine, type Token } from './python-lines';
import {
  namesTests,
  noTestDeps,
  plainName,
  plainRequirement,
  projectExtras,
  repositoryFile,
  type PythonTestDeps,
} from './python-test-deps';

// nox's test sessions, read from noxfile.py without running it: the `session.install(…)` calls of the
// sessions whose names say they run the tests (`tests`, `unit_tests`, `@nox.session(name="test")`), or,
// when none does, of the one session that runs pytest. Their literal arguments are read as pip reads
// them: plain requirement specifiers, `-r` files inside the repository, and the project's own extras
// (`.[test]`, `-e .`). Anything computed (`*deps` from elsewhere, f-strings) and every other option is
// dropped, as the tox reader drops them.

export interface NoxTestDeps extends PythonTestDeps {
  /** The sessions read. */
  sessions: string[];
}

/** Characters: far more than a real noxfile has; a longer one is not read. */
export const MAX_NOXFILE_LENGTH = 256 * 1024;

// pip options whose value is the next argument: the value is neither a package nor a file to read.
const OPTIONS_WITH_VALUE = new Set([
  '-c',
  '--constraint',
  '-i',
  '--index-url',
  '--extra-index-url',
  '-f',
  '--find-links',
  '--upgrade-strategy',
  '--no-binary',
  '--only-binary',
  '-C',
  '--config-settings',
  '--trusted-host',
  '-t',
  '--target',
  '--prefix',
  '--platform',
  '--python-version',
]);

/** More install arguments than a real noxfile has; what comes after them is not read. */
const MAX_INSTALL_ARGUMENTS = 1000;
/** A module-level list longer than this is not a list of test dependencies, and is not expanded. */
const MAX_LIST_LENGTH = 100;

interface Session {
  name: string;
  /** The literal arguments of each `session.install(…)` call; null for an argument that is computed. */
  installs: Array<Array<string | null>>;
  runsPytest: boolean;
}

export function noxTestDeps(noxfile: string): NoxTestDeps {
  // A session's name goes into the plan's details: one that is not a plain name is not read.
  const found = sessions(logicalLines(noxfile)).filter((s) => plainName(s.name));
  const named = found.filter((s) => namesTests(s.name));
  const pytest = found.filter((s) => s.runsPytest);
  const chosen = named.length ? named : pytest.length === 1 ? pytest : [];
  const deps = noTestDeps();
  for (const session of chosen) for (const args of session.installs) readPipArguments(args, deps);
  return { ...deps, sessions: chosen.map((s) => s.name) };
}

function sessions(lines: LogicalLine[]): Session[] {
  const constants = stringLists(lines);
  const found: Session[] = [];
  let budget = MAX_INSTALL_ARGUMENTS;
  lines.forEach((line, at) => {
    const t = line.tokens;
    const def = word(t[0], 'async') ? 1 : 0;
    // Sessions are module-level functions; reading only those keeps the work linear in the file's size.
    if (line.indent !== 0 || !word(t[def], 'def') || t[def + 1]?.kind !== 'name' || !op(t[def + 2], '(')) return;
    const decorators: Token[][] = [];
    for (let d = at - 1; d >= 0 && lines[d]!.indent === 0 && op(lines[d]!.tokens[0], '@'); d--)
      decorators.push(lines[d]!.tokens.slice(1));
    const session = decorators.find(isSessionDecorator);
    const param = t[def + 3];
    if (!session || param?.kind !== 'name') return;
    let end = at + 1;
    while (end < lines.length && lines[end]!.indent > 0) end++;
    const body = lines.slice(at + 1, end).flatMap((l) => l.tokens);
    const installs = calls(body, param.text, 'install').map((args) => {
      const strings: Array<string | null> = [];
      for (const arg of args.slice(0, budget)) strings.push(...literal(arg, constants));
      const read = strings.slice(0, Math.max(budget, 0));
      budget -= read.length;
      return read;
    });
    found.push({
      name: keywordString(session, 'name') ?? t[def + 1]!.text,
      installs,
      runsPytest: calls(body, param.text, 'run').some((args) =>
        args.some((a) => literal(a, constants)[0] === 'pytest'),
      ),
    });
  });
  return found;
}

const word = (t: Token | undefined, text: string) => t?.kind === 'name' && t.text === text;
/** One of `chars` as an operator or bracket (never a string that holds it). */
const op = (t: Token | undefined, chars: string) => t?.kind === 'op' && chars.includes(t.text);

/** `@nox.session`, `@nox.session(…)`, `@session`, `@session(…)`. */
function isSessionDecorator(tokens: Token[]): boolean {
  const rest = word(tokens[0], 'nox') && op(tokens[1], '.') ? tokens.slice(2) : tokens;
  return word(rest[0], 'session') && (rest.length === 1 || op(rest[1], '('));
}

/** A keyword argument's string literal: `name="tests"` in a decorator. */
function keywordString(tokens: Token[], keyword: string): string | undefined {
  const at = tokens.findIndex((t, i) => word(t, keyword) && op(tokens[i + 1], '='));
  const value = at >= 0 ? tokens[at + 2] : undefined;
  return value?.kind === 'string' ? value.text : undefined;
}

/** The arguments (as token lists) of every `<receiver>.<method>(…)` call in `tokens`. */
function calls(tokens: Token[], receiver: string, method: string): Token[][][] {
  const found: Token[][][] = [];
  for (let i = 0; i + 3 < tokens.length; i++) {
    if (!word(tokens[i], receiver) || !op(tokens[i + 1], '.') || !word(tokens[i + 2], method)) continue;
    if (!op(tokens[i + 3], '(') || op(tokens[i - 1], '.')) continue;
    const args: Token[][] = [[]];
    let depth = 0;
    let j = i + 4;
    for (; j < tokens.length; j++) {
      const t = tokens[j]!;
      if (op(t, '([{')) depth++;
      if (op(t, ')]}') && depth-- === 0) break;
      if (op(t, ',') && depth === 0) args.push([]);
      else args[args.length - 1]!.push(t);
    }
    found.push(args.filter((a) => a.length));
    // On after the call: a call inside its arguments is not one to read, and the work stays linear.
    i = j;
  }
  return found;
}

/** An argument's strings: one literal, the literals of `*NAME` for a module-level list of them, else [null]. */
function literal(arg: Token[], constants: Map<string, string[]>): Array<string | null> {
  if (arg.length === 1 && arg[0]!.kind === 'string') return [arg[0]!.text];
  if (arg.length === 2 && op(arg[0], '*') && arg[1]!.kind === 'name' && constants.has(arg[1]!.text))
    return constants.get(arg[1]!.text)!;
  return [null];
}

/** Module-level `NAME = ["pytest", "coverage"]` (or a tuple): a list of string literals under a name. */
function stringLists(lines: LogicalLine[]): Map<string, string[]> {
  const lists = new Map<string, string[]>();
  for (const { indent, tokens } of lines) {
    const [name, equals, open] = tokens;
    const close = tokens[tokens.length - 1];
    if (indent !== 0 || name?.kind !== 'name' || !op(equals, '=') || !close) continue;
    if (!((op(open, '[') && op(close, ']')) || (op(open, '(') && op(close, ')')))) continue;
    // "a", "b", … with or without a trailing comma.
    const inner = tokens.slice(3, -1);
    const items = inner.filter((_, i) => i % 2 === 0);
    const separators = inner.filter((_, i) => i % 2 === 1);
    if (items.length > MAX_LIST_LENGTH) continue;
    if (items.every((t) => t.kind === 'string') && separators.every((t) => op(t, ',')))
      lists.set(
        name.text,
        items.map((t) => t.text),
      );
  }
  return lists;
}

/** One `session.install` call's arguments as pip reads them, into `deps`. */
function readPipArguments(args: Array<string | null>, deps: PythonTestDeps): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === null || arg === undefined) continue;
    const requirementsFile = /^(?:-r|--requirement=)(.+)$/.exec(arg)?.[1];
    if (arg === '-r' || arg === '--requirement' || requirementsFile !== undefined) {
      const file = requirementsFile ?? args[++i];
      const rel = typeof file === 'string' ? repositoryFile(file) : null;
      if (rel) deps.files.push(rel);
    } else if (arg === '-e' || arg === '--editable') {
      const target = args[++i];
      deps.extras.push(...((typeof target === 'string' && projectExtras(target)) || []));
    } else if (arg.startsWith('-')) {
      if (OPTIONS_WITH_VALUE.has(arg)) i++;
    } else {
      const extras = projectExtras(arg);
      if (extras) deps.extras.push(...extras);
      else {
        const requirement = plainRequirement(arg);
        if (requirement) deps.requirements.push(requirement);
      }
    }
  }
}
