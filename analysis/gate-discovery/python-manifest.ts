import type { Layer } from './layer';
import { readToml, stringsOf, tableAt, type TomlTable } from './toml';
import { isRecord } from './util';
import type { WorkspaceFiles } from './workspace-files';

// A Python project: pyproject.toml (parsed with smol-toml) and the other places pytest, mypy and ruff
// are configured, the dependencies it declares, how its tools are run, and the gates they provide.

export interface PythonFacts {
  /** The file that makes this a Python project, e.g. `pyproject.toml`, `setup.cfg`, `tests/test_x.py`. */
  manifest: string;
  pyproject: TomlTable | undefined;
  dependencies: Set<string>;
  /** How tools are run: through the lockfile's project manager, else `python3 -m`. */
  runner: { prefix: string[]; evidence: string };
  /** Why pytest is the test runner, e.g. `tox.ini [pytest]`; undefined when nothing says so. */
  pytest: string | undefined;
  ruffConfig: string | undefined;
}

// Files that make a repository a Python project, most telling first; a tests directory counts last.
const PYTHON_MARKERS = ['pyproject.toml', 'setup.cfg', 'setup.py', 'tox.ini', 'pytest.ini', 'conftest.py'];
const PYTEST_TEST_FILE = /^(test_.*|.*_test)\.py$/;

export async function readPythonFacts(files: WorkspaceFiles): Promise<PythonFacts | undefined> {
  const pyproject = await readToml(files, 'pyproject.toml');
  const testFile =
    (await files.findFile('tests', PYTEST_TEST_FILE, 3)) ?? (await files.findFile('test', PYTEST_TEST_FILE, 3));
  const manifest = (await files.firstFile(PYTHON_MARKERS)) ?? testFile;
  if (manifest === undefined) return undefined;
  const lock = await files.firstFile(['uv.lock', 'poetry.lock', 'pdm.lock']);
  const runner = lock
    ? { prefix: [lock.split('.')[0]!, 'run'], evidence: lock }
    : // python3, not python: many images ship only python3 without the `python` alias.
      { prefix: ['python3', '-m'], evidence: 'no lockfile, python3 -m' };
  const dependencies = pythonDependencies(pyproject);
  return {
    manifest,
    pyproject,
    dependencies,
    runner,
    pytest: await pytestEvidence(files, pyproject, dependencies, testFile),
    ruffConfig: await files.firstFile(['ruff.toml', '.ruff.toml']),
  };
}

/**
 * Where pytest is configured, in pytest's own order of config files (pytest.ini, pyproject.toml,
 * tox.ini `[pytest]`, setup.cfg `[tool:pytest]`), then a pytest dependency, a conftest.py, or test
 * files pytest collects by default.
 */
async function pytestEvidence(
  files: WorkspaceFiles,
  pyproject: TomlTable | undefined,
  dependencies: Set<string>,
  testFile: string | undefined,
): Promise<string | undefined> {
  if (await files.isFile('pytest.ini')) return 'pytest.ini';
  if (tableAt(pyproject, 'tool.pytest.ini_options')) return 'pyproject.toml [tool.pytest.ini_options]';
  if (tableAt(pyproject, 'tool.pytest')) return 'pyproject.toml [tool.pytest]';
  if (iniHasSection(await quietRead(files, 'tox.ini'), 'pytest')) return 'tox.ini [pytest]';
  if (iniHasSection(await quietRead(files, 'setup.cfg'), 'tool:pytest')) return 'setup.cfg [tool:pytest]';
  if (dependencies.has('pytest')) return 'a pytest dependency in pyproject.toml';
  if (await files.isFile('conftest.py')) return 'conftest.py';
  if (testFile) return `test files pytest collects (${testFile})`;
  return undefined;
}

async function quietRead(files: WorkspaceFiles, rel: string): Promise<string | undefined> {
  return (await files.isFile(rel)) ? files.manifest(rel) : undefined;
}

function iniHasSection(text: string | undefined, section: string): boolean {
  if (text === undefined) return false;
  const escaped = section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\s*\\[\\s*${escaped}\\s*\\]\\s*$`, 'm').test(text);
}

/** Normalised (PEP 503) names of every dependency pyproject.toml declares, in any common layout. */
function pythonDependencies(doc: TomlTable | undefined): Set<string> {
  const specs: string[] = [];
  specs.push(...stringsOf(tableAt(doc, 'project')?.dependencies));
  specs.push(...stringsOf(tableAt(doc, 'tool.uv')?.['dev-dependencies']));
  // PEP 621 extras and PEP 735 groups: every value is a list of requirement strings.
  for (const t of ['project.optional-dependencies', 'dependency-groups']) {
    for (const list of Object.values(tableAt(doc, t) ?? {})) specs.push(...stringsOf(list));
  }
  // Poetry declares dependencies as keys: `pytest = "^8"`.
  const poetry = tableAt(doc, 'tool.poetry');
  const groups = Object.values(tableAt(poetry, 'group') ?? {}).map((g) =>
    isRecord(g) ? tableAt(g, 'dependencies') : undefined,
  );
  for (const table of [tableAt(poetry, 'dependencies'), tableAt(poetry, 'dev-dependencies'), ...groups]) {
    specs.push(...Object.keys(table ?? {}));
  }
  const names = specs.map((s) => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(s)?.[1]).filter((n): n is string => !!n);
  return new Set(names.map((n) => n.toLowerCase().replace(/[-_.]+/g, '-')));
}

export function pythonInference(py: PythonFacts): Layer {
  const layer: Layer = {};
  const run = (tool: string, ...args: string[]) => [...py.runner.prefix, tool, ...args];
  const how = `run with ${py.runner.evidence}`;
  // -rA: a `PASSED <node id>` line per passed test, whatever verbosity addopts set, so acceptance
  // criteria naming a test can be proven.
  if (py.pytest)
    layer.tests = { argv: run('pytest', '-rA'), detail: `pytest: ${py.pytest}, ${how}; -rA lists every passed test` };

  const mypyTable = tableAt(py.pyproject, 'tool.mypy');
  if (mypyTable !== undefined || py.dependencies.has('mypy')) {
    // With `files` configured, plain `mypy` checks exactly those; `mypy .` would override them.
    const args = mypyTable?.files !== undefined ? [] : ['.'];
    layer.typecheck = {
      argv: run('mypy', ...args),
      detail: `pyproject.toml: ${mypyTable !== undefined ? '[tool.mypy]' : 'a mypy dependency'}, ${how}`,
    };
  }
  const ruff =
    (tableAt(py.pyproject, 'tool.ruff') && '[tool.ruff]') ||
    py.ruffConfig ||
    (py.dependencies.has('ruff') && 'a ruff dependency');
  if (ruff) layer.lint = { argv: run('ruff', 'check', '.'), detail: `pyproject.toml: ${ruff}, ${how}` };
  // No build gate: building a wheel needs the `build` package and says little about correctness.
  return layer;
}
