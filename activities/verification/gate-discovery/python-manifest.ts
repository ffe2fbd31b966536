import type { Layer } from './layer';
import { quotedStrings, tomlArray, tomlTables } from './toml-scan';
import type { WorkspaceFiles } from './workspace-files';

// pyproject.toml: its tables, the dependencies it declares, how its tools are run, and the gates they provide.

export interface PythonFacts {
  tables: Map<string, string>;
  dependencies: Set<string>;
  /** How tools are run: through the lockfile's project manager, else `python3 -m`. */
  runner: { prefix: string[]; evidence: string };
  pytestIni: boolean;
  ruffConfig: string | undefined;
}

export async function readPythonFacts(files: WorkspaceFiles): Promise<PythonFacts | undefined> {
  const text = await files.manifest('pyproject.toml');
  if (text === undefined) return undefined;
  const tables = tomlTables(text);
  const lock = await files.firstFile(['uv.lock', 'poetry.lock', 'pdm.lock']);
  const runner = lock
    ? { prefix: [lock.split('.')[0]!, 'run'], evidence: lock }
    : // python3, not python: many images ship only python3 without the `python` alias.
      { prefix: ['python3', '-m'], evidence: 'no lockfile, python3 -m' };
  return {
    tables,
    dependencies: pythonDependencies(tables),
    runner,
    pytestIni: await files.isFile('pytest.ini'),
    ruffConfig: await files.firstFile(['ruff.toml', '.ruff.toml']),
  };
}

/** Normalised (PEP 503) names of every dependency pyproject.toml declares, in any common layout. */
function pythonDependencies(tables: Map<string, string>): Set<string> {
  const specs: string[] = [];
  specs.push(...quotedStrings(tomlArray(tables.get('project') ?? '', 'dependencies')));
  specs.push(...quotedStrings(tomlArray(tables.get('tool.uv') ?? '', 'dev-dependencies')));
  // PEP 621 extras and PEP 735 groups: every value is a list of requirement strings.
  for (const t of ['project.optional-dependencies', 'dependency-groups']) specs.push(...quotedStrings(tables.get(t) ?? ''));
  // Poetry declares dependencies as keys: `pytest = "^8"`.
  for (const [name, body] of tables) {
    if (/^tool\.poetry\.(dependencies|dev-dependencies|group\.[^.]+\.dependencies)$/.test(name)) {
      specs.push(...[...body.matchAll(/^\s*"?([A-Za-z0-9][A-Za-z0-9._-]*)"?\s*=/gm)].map((m) => m[1]!));
    }
  }
  const names = specs.map((s) => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(s)?.[1]).filter((n): n is string => !!n);
  return new Set(names.map((n) => n.toLowerCase().replace(/[-_.]+/g, '-')));
}

export function pythonInference(py: PythonFacts): Layer {
  const layer: Layer = {};
  const run = (tool: string, ...args: string[]) => [...py.runner.prefix, tool, ...args];
  const how = `run with ${py.runner.evidence}`;
  const pytest =
    (py.tables.has('tool.pytest.ini_options') && '[tool.pytest.ini_options]') ||
    (py.tables.has('tool.pytest') && '[tool.pytest]') ||
    (py.pytestIni && 'pytest.ini') ||
    (py.dependencies.has('pytest') && 'a pytest dependency');
  if (pytest) layer.tests = { argv: run('pytest'), detail: `pyproject.toml: ${pytest}, ${how}` };

  const mypyTable = py.tables.get('tool.mypy');
  if (mypyTable !== undefined || py.dependencies.has('mypy')) {
    // With `files` configured, plain `mypy` checks exactly those; `mypy .` would override them.
    const args = mypyTable !== undefined && /^\s*files\s*=/m.test(mypyTable) ? [] : ['.'];
    layer.typecheck = {
      argv: run('mypy', ...args),
      detail: `pyproject.toml: ${mypyTable !== undefined ? '[tool.mypy]' : 'a mypy dependency'}, ${how}`,
    };
  }
  const ruff =
    ([...py.tables.keys()].some((t) => t === 'tool.ruff' || t.startsWith('tool.ruff.')) && '[tool.ruff]') ||
    py.ruffConfig ||
    (py.dependencies.has('ruff') && 'a ruff dependency');
  if (ruff) layer.lint = { argv: run('ruff', 'check', '.'), detail: `pyproject.toml: ${ruff}, ${how}` };
  // No build gate: building a wheel needs the `build` package and says little about correctness.
  return layer;
}
