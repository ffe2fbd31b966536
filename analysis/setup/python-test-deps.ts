// Python test dependencies declared outside pyproject's extras and the requirements files: tox's
// `[testenv]` `deps` and `extras`, and hatch's default and test environments; and the helpers every
// reader of them shares (dependency-groups.ts, poetry-groups.ts, noxfile.ts). Set-up installs them so the
// gates find their tools (docs/repository.md). What goes to pip comes from the repository, so only plain
// requirement specifiers pass (no options, URLs or paths), and `-r` only names files inside it.

import { stringsOf, tableAt, type TomlTable } from '../gate-discovery/toml';

export interface PythonTestDeps {
  /** Requirement specifiers, as pip takes them (`pytest>=8`, `coverage[toml]`). */
  requirements: string[];
  /** Requirements files (`-r`), relative to the repository root. */
  files: string[];
  /** Extras of the project itself (`pip install -e .[extras]`). */
  extras: string[];
}

export const noTestDeps = (): PythonTestDeps => ({ requirements: [], files: [], extras: [] });

// Versions and operators share no character, so a long line cannot make the match backtrack.
const REQUIREMENT =
  /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9._, -]+\])?\s*(?:[<>=!~]=?\s*[A-Za-z0-9.*+_-]+\s*(?:,\s*)?)*$/;
const REQUIREMENTS_FILE = /^-r\s*(?:\{toxinidir\}\/)?(\S+)$/;
/** Longer than any real requirement; bounds the work spent on one. */
const MAX_REQUIREMENT_LENGTH = 500;
// The names a PEP 508 environment marker may use (`extra` is left out: pip has none on its command line).
const MARKER_WORDS = new Set([
  'python_version',
  'python_full_version',
  'os_name',
  'sys_platform',
  'platform_release',
  'platform_system',
  'platform_version',
  'platform_machine',
  'platform_python_implementation',
  'implementation_name',
  'implementation_version',
  'and',
  'or',
  'in',
  'not',
]);

/**
 * A specifier pip reads as a package from the index: name, extras, versions, and an environment marker
 * (`; sys_platform == "win32"`) made of marker names, comparisons and quoted values. Anything else is null.
 */
export function plainRequirement(line: string): string | null {
  if (line.length > MAX_REQUIREMENT_LENGTH) return null;
  const [spec, marker, ...more] = line.split(';');
  const requirement = spec!.trim();
  if (more.length || !REQUIREMENT.test(requirement)) return null;
  if (marker === undefined) return requirement;
  return plainMarker(marker.trim()) ? `${requirement}; ${marker.trim()}` : null;
}

function plainMarker(marker: string): boolean {
  if (!/^[\w\s.'"<>=!~()*-]+$/.test(marker)) return false;
  const outsideQuotes = marker.replace(/"[^"]*"|'[^']*'/g, ' ');
  // What is left once the marker names, operators and parentheses are taken out must be blank.
  const rest = outsideQuotes.replace(/[A-Za-z_]\w*|[<>=!~]=|={3}|[<>()]/g, (t) =>
    /^[A-Za-z_]/.test(t) && !MARKER_WORDS.has(t) ? '?' : ' ',
  );
  return rest.trim() === '';
}

/** PEP 503's normal form of a project or group name: `Test_Utils` → `test-utils`. */
export function normalisedName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** A project, extra or group name as the packaging specifications allow it; nothing pip could take for an option. */
export function plainName(name: string): boolean {
  return /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$/.test(name);
}

// The words of a group's name that say the gates need it: its tests (test, pytest), the development
// set-up they usually sit in (dev), CI and checks, and the lint and typecheck gates' tools. Docs,
// release, benchmark or notebook groups are not installed.
const GATE_GROUP_WORDS = new Set([
  'test',
  'tests',
  'testing',
  'pytest',
  'dev',
  'develop',
  'development',
  'ci',
  'check',
  'checks',
  'qa',
  'lint',
  'linting',
  'typing',
  'typecheck',
  'mypy',
]);
const TEST_WORDS = new Set(['test', 'tests', 'testing', 'pytest']);

/** Whether a dependency group (PEP 735 or poetry) holds what the gates run: a word of its name is one of the above. */
export function servesGates(group: string): boolean {
  return (
    plainName(group) &&
    normalisedName(group)
      .split('-')
      .some((w) => GATE_GROUP_WORDS.has(w))
  );
}

/** Whether a name (a nox session's) says it runs the tests: `tests`, `unit_tests`, `pytest-3.12`. */
export function namesTests(name: string): boolean {
  return normalisedName(name)
    .split('-')
    .some((w) => TEST_WORDS.has(w));
}

/** A requirements file pip may be given: a relative path inside the repository, without `..`. */
export function repositoryFile(path: string): string | null {
  const rel = path.replace(/^(?:\.\/)+/, '');
  if (!/^[A-Za-z0-9._/-]+$/.test(rel) || rel.startsWith('/') || rel.startsWith('-')) return null;
  return rel.split('/').includes('..') ? null : rel;
}

/** The extras of the project itself in `.`, `./` or `.[test, lint]`; null for anything else. */
export function projectExtras(target: string): string[] | null {
  const match = /^\.\/?(?:\[([^\]]*)\])?$/.exec(target);
  if (!match) return null;
  return (match[1] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(plainName);
}

/** tox.ini's `[testenv]` section: `deps` (requirements and `-r` files) and `extras`. */
export function toxTestDeps(toxIni: string): PythonTestDeps {
  const values = iniSection(toxIni, 'testenv');
  const deps = noTestDeps();
  for (const line of values.get('deps') ?? []) {
    // `py38: pytest<7`: only for some environments; `-c`, `--pre`: options pip is not given here.
    if (/^[\w{},.-]+:\s/.test(line)) continue;
    const file = REQUIREMENTS_FILE.exec(line)?.[1];
    if (file !== undefined) {
      const rel = repositoryFile(file);
      if (rel) deps.files.push(rel);
      continue;
    }
    const requirement = plainRequirement(line);
    if (requirement) deps.requirements.push(requirement);
  }
  for (const line of values.get('extras') ?? [])
    for (const extra of line.split(/[\s,]+/)) if (plainName(extra)) deps.extras.push(extra);
  return deps;
}

/** One INI section's keys → their value lines (the first line's value and indented continuations), comments dropped. */
function iniSection(text: string, name: string): Map<string, string[]> {
  const values = new Map<string, string[]>();
  let inSection = false;
  let key: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$|^\s*[#;].*$/, '');
    const header = /^\[([^\]]+)\]\s*$/.exec(line);
    if (header) {
      inSection = header[1]!.trim() === name;
      key = null;
      continue;
    }
    if (!inSection || !line.trim()) continue;
    const entry = /^([A-Za-z_][\w-]*)\s*=\s*(.*)$/.exec(line);
    if (entry && !/^\s/.test(line)) {
      key = entry[1]!;
      values.set(key, entry[2]!.trim() ? [entry[2]!.trim()] : []);
    } else if (key && /^\s/.test(line)) {
      values.get(key)!.push(line.trim());
    }
  }
  return values;
}

/** Hatch's `dependencies` and `extra-dependencies` of its default and test environments. */
export function hatchTestDeps(pyproject: TomlTable | undefined): string[] {
  const requirements: string[] = [];
  for (const env of ['default', 'test', 'tests', 'hatch-test']) {
    const table = tableAt(pyproject, `tool.hatch.envs.${env}`);
    for (const spec of [...stringsOf(table?.dependencies), ...stringsOf(table?.['extra-dependencies'])]) {
      const requirement = plainRequirement(spec);
      if (requirement) requirements.push(requirement);
    }
  }
  return requirements;
}
