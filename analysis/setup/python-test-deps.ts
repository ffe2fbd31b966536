// Python test dependencies declared outside pyproject's extras and the requirements files: tox's
// `[testenv]` `deps` and `extras`, and hatch's default and test environments. Set-up installs them so
// the tests gate finds its runner (docs/repository.md). What goes to pip comes from the repository, so
// only plain requirement specifiers pass (no options, URLs or paths), and `-r` only names files inside it.

export interface PythonTestDeps {
  /** Requirement specifiers, as pip takes them (`pytest>=8`, `coverage[toml]`). */
  requirements: string[];
  /** Requirements files (`-r`), relative to the repository root. */
  files: string[];
  /** Extras of the project itself (`pip install -e .[extras]`). */
  extras: string[];
}

// Versions and operators share no character, so a long line cannot make the match backtrack.
const REQUIREMENT =
  /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9._, -]+\])?\s*(?:[<>=!~]=?\s*[A-Za-z0-9.*+_-]+\s*(?:,\s*)?)*$/;
const REQUIREMENTS_FILE = /^-r\s*(?:\{toxinidir\}\/)?([A-Za-z0-9._/-]+)$/;

/** A specifier pip reads as a package from the index: name, extras, versions; markers after `;` dropped. */
export function plainRequirement(line: string): string | null {
  const spec = line.split(';')[0]!.trim();
  return REQUIREMENT.test(spec) ? spec : null;
}

/** tox.ini's `[testenv]` section: `deps` (requirements and `-r` files) and `extras`. */
export function toxTestDeps(toxIni: string): PythonTestDeps {
  const values = iniSection(toxIni, 'testenv');
  const deps: PythonTestDeps = { requirements: [], files: [], extras: [] };
  for (const line of values.get('deps') ?? []) {
    // `py38: pytest<7`: only for some environments; `-c`, `--pre`: options pip is not given here.
    if (/^[\w{},.-]+:\s/.test(line)) continue;
    const file = REQUIREMENTS_FILE.exec(line)?.[1];
    if (file) {
      if (!file.split('/').includes('..') && !file.startsWith('/')) deps.files.push(file);
      continue;
    }
    const requirement = plainRequirement(line);
    if (requirement) deps.requirements.push(requirement);
  }
  for (const line of values.get('extras') ?? [])
    for (const extra of line.split(/[\s,]+/)) if (/^[A-Za-z0-9._-]+$/.test(extra)) deps.extras.push(extra);
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

/** Hatch's `dependencies` and `extra-dependencies` of its default and test environments (pyproject tables' lines). */
export function hatchTestDeps(tables: Map<string, string>): string[] {
  const requirements: string[] = [];
  for (const env of ['default', 'test', 'tests', 'hatch-test']) {
    const table = tables.get(`tool.hatch.envs.${env}`);
    if (!table) continue;
    // The list ends at the `]` that ends a line: `"coverage[toml]"` holds one too.
    for (const [, list] of table.matchAll(/^\s*(?:extra-)?dependencies\s*=\s*\[([\s\S]*?)\]\s*$/gm))
      for (const [, quoted] of list!.matchAll(/["']([^"']+)["']/g)) {
        const requirement = plainRequirement(quoted!);
        if (requirement) requirements.push(requirement);
      }
  }
  return requirements;
}
