import type { SetupPlan } from '../../domain/setup';
import type { WorkspaceFiles } from '../gate-discovery/workspace-files';
import { parseToml, tableAt } from '../gate-discovery/toml';
import { dependencyGroups } from './dependency-groups';
import { addInferred as add, type Installed } from './inferred-command';
import { MAX_NOXFILE_LENGTH, noxTestDeps, type NoxTestDeps } from './noxfile';
import { poetryTestGroups, type PoetryGroup } from './poetry-groups';
import { hatchTestDeps, noTestDeps, toxTestDeps } from './python-test-deps';

// A Python project's set-up: a venv per work dir, the project installed into it (pip, poetry or uv), then
// the test dependencies declared beside it: extras, PEP 735 and poetry groups, requirements files, tox,
// hatch and nox (docs/repository.md).

const TEST_EXTRAS = ['test', 'tests', 'testing', 'dev'];
const REQUIREMENTS = [
  'requirements.txt',
  'requirements-dev.txt',
  'requirements-test.txt',
  'requirements_dev.txt',
  'requirements_test.txt',
  'dev-requirements.txt',
  'test-requirements.txt',
];

/** More than a real project lists in one place; a command line holds them with room to spare. */
const MAX_REQUIREMENTS = 500;

export async function inferPython(files: WorkspaceFiles, plan: SetupPlan, installed: Installed): Promise<void> {
  const pyprojectText = await files.manifest('pyproject.toml');
  const requirements: string[] = [];
  for (const r of REQUIREMENTS) if (await files.isFile(r)) requirements.push(r);
  const setupPy = (await files.isFile('setup.py')) || (await files.isFile('setup.cfg'));
  const toxIni = await files.manifest('tox.ini');
  const noxfile = await files.manifest('noxfile.py');
  if ([pyprojectText, toxIni, noxfile].every((t) => t === undefined) && requirements.length === 0 && !setupPy) return;

  // A virtual environment per work dir: its bin directory goes first on the PATH of gates and the maker.
  plan.outputs.push('.venv/');
  plan.binDirs.push('.venv/bin');
  const pyproject = pyprojectText !== undefined ? parseToml(pyprojectText, 'pyproject.toml', plan.notes) : undefined;
  const groups = dependencyGroups(pyproject);
  plan.notes.push(...groups.notes);
  if ((await files.isFile('uv.lock')) && installed('uv')) {
    // uv installs the `dev` group by default, the other groups only when named.
    const named = groups.groups.flatMap((g) => ['--group', g]);
    add(plan, ['uv', 'sync', '--frozen', '--all-extras', ...named], 'uv.lock (uv sync into .venv)');
    return;
  }
  add(plan, ['python3', '-m', 'venv', '.venv'], 'a virtual environment for this work dir (.venv)');
  // A [tool.poetry] table of its own (not one that only holds groups) or a lockfile: poetry installs it.
  if ((await files.isFile('poetry.lock')) || /^\s*\[\s*tool\s*\.\s*poetry\s*\]/m.test(pyprojectText ?? '')) {
    poetryInstall(plan, poetryTestGroups(pyproject), installed);
    return;
  }
  const tox = toxIni !== undefined ? toxTestDeps(toxIni) : noTestDeps();
  const nox = readNoxfile(noxfile, plan.notes);
  const projectExtras = [...tox.extras, ...nox.extras];
  if (pyproject !== undefined && (pyproject.project !== undefined || pyproject['build-system'] !== undefined)) {
    const declared = Object.keys(tableAt(pyproject, 'project.optional-dependencies') ?? {});
    const target = withExtras([...TEST_EXTRAS.filter((e) => declared.includes(e)), ...projectExtras]);
    add(plan, pip('-e', target), `pyproject.toml (pip install -e ${target})`);
  } else if (setupPy) {
    const target = withExtras(projectExtras);
    add(plan, pip('-e', target), `setup.py / setup.cfg (pip install -e ${target})`);
  }
  install(plan, groups.requirements, `pyproject.toml [dependency-groups] ${groups.groups.join(', ')}`);
  const poetryGroups = poetryTestGroups(pyproject).filter((g) => g.requirements.length);
  install(
    plan,
    poetryGroups.flatMap((g) => g.requirements),
    `pyproject.toml [tool.poetry] groups ${poetryGroups.map((g) => g.name).join(', ')}`,
  );
  for (const r of requirements) add(plan, pip('-r', r), `${r} (pip install -r)`);
  const listed = new Set(requirements);
  const requirementsFiles = async (source: string, rels: string[]) => {
    for (const r of rels.filter((f) => !listed.has(f))) {
      listed.add(r);
      if (await files.isFile(r)) add(plan, pip('-r', r), `${source} -r ${r} (pip install -r)`);
      else plan.notes.push(`${source} names ${r}, which the repository does not have; not installed`);
    }
  };
  await requirementsFiles('tox.ini [testenv] deps', tox.files);
  install(plan, tox.requirements, 'tox.ini [testenv] deps');
  install(plan, hatchTestDeps(pyproject), 'pyproject.toml [tool.hatch.envs]');
  const sessions = `noxfile.py session ${nox.sessions.join(', ')}`;
  await requirementsFiles(sessions, nox.files);
  install(plan, nox.requirements, sessions);
}

const pip = (...args: string[]) => ['.venv/bin/python', '-m', 'pip', 'install', ...args];

/** One source's requirements in one pip command, each once; more than a command line should hold are refused. */
function install(plan: SetupPlan, requirements: string[], source: string): void {
  const unique = [...new Set(requirements)];
  if (unique.length > MAX_REQUIREMENTS)
    plan.notes.push(`${source} lists more than ${MAX_REQUIREMENTS} requirements; not installed`);
  else if (unique.length) add(plan, pip(...unique), `${source} (pip install)`);
}

/** poetry install (poetry itself into .venv when the worker has none), with the optional groups the gates need. */
function poetryInstall(plan: SetupPlan, groups: PoetryGroup[], installed: Installed): void {
  if (!installed('poetry')) add(plan, pip('--quiet', 'poetry'), 'poetry into .venv (not installed on the worker)');
  // poetry installs every group but the optional ones.
  const optional = groups.filter((g) => g.optional).map((g) => g.name);
  const withOptional = optional.length ? ['--with', optional.join(',')] : [];
  add(
    plan,
    [installed('poetry') ? 'poetry' : '.venv/bin/poetry', 'install', '--no-interaction', ...withOptional],
    `poetry.lock / [tool.poetry] (poetry install into .venv${optional.length ? `, optional groups ${optional.join(', ')}` : ''})`,
  );
}

function readNoxfile(text: string | undefined, notes: string[]): NoxTestDeps {
  if (text === undefined) return { ...noTestDeps(), sessions: [] };
  if (text.length > MAX_NOXFILE_LENGTH) {
    notes.push(`noxfile.py is longer than ${MAX_NOXFILE_LENGTH} characters; its sessions are not read`);
    return { ...noTestDeps(), sessions: [] };
  }
  return noxTestDeps(text);
}

/** `.` or `.[a,b]`: the project itself, with its extras once each. */
function withExtras(extras: string[]): string {
  return extras.length ? `.[${[...new Set(extras)].join(',')}]` : '.';
}
