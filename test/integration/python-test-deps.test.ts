import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveSetupPlan } from '../../activities/setup/infer-setup';

// Issue 28: a Python project whose pytest is declared only in a dependency group gets it from the set-up
// the loop infers. Its commands run here with python3 and the pip its venv bundles (pip's own `--group`
// needs pip 25.1; Python 3.11 bundles 23.2), installing from the package index, and then the project's
// tests run with that pytest.

let dir: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'python-test-deps-')));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const TESTS = {
  'tempconv/__init__.py': 'def to_fahrenheit(celsius):\n    return celsius * 9 / 5 + 32\n',
  'tests/test_convert.py':
    'from tempconv import to_fahrenheit\n\n\ndef test_boiling_point():\n    assert to_fahrenheit(100) == 212\n',
};

/** Writes the project, runs every inferred set-up command in it, then its tests with the venv's pytest. */
async function setUpAndTest(files: Record<string, string>): Promise<{ argvs: string[]; pytest: string }> {
  for (const [file, text] of Object.entries({ ...files, ...TESTS })) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  // No uv or poetry on the search path: the pip route, which needs nothing but python3.
  const plan = await resolveSetupPlan({ workspace: dir, searchPath: '' });
  for (const { argv, timeoutSeconds } of plan.commands)
    execFileSync(argv[0]!, argv.slice(1), { cwd: dir, stdio: 'pipe', timeout: timeoutSeconds * 1000 });
  const pytest = execFileSync('.venv/bin/python', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { argvs: plan.commands.map((c) => c.argv.join(' ')), pytest };
}

// Poetry 2's layout: PEP 621 metadata and poetry-core to build it; no lockfile, so pip installs it. Poetry
// reads PEP 735 groups as well as its own: pytest is in the first, through an include; the second holds a
// caret constraint, a Python condition and a package for another platform, all in pip's words.
const PYPROJECT = `[build-system]
requires = ["poetry-core>=2.0"]
build-backend = "poetry.core.masonry.api"

[project]
name = "tempconv"
version = "0.1.0"

[dependency-groups]
test = [{ include-group = "runner" }]
runner = ["pytest==8.3.4"]

[tool.poetry.group.test.dependencies]
pluggy = { version = "^1.5", python = ">=3.8" }
pywin32 = { version = ">=306", markers = "sys_platform == 'win32'" }
`;

test('pytest only in a PEP 735 group, poetry constraints and markers: installed with the pip a venv has, and the tests run', async () => {
  const { argvs, pytest } = await setUpAndTest({ 'pyproject.toml': PYPROJECT });
  expect(argvs).toEqual([
    'python3 -m venv .venv',
    '.venv/bin/python -m pip install -e .',
    '.venv/bin/python -m pip install pytest==8.3.4',
    `.venv/bin/python -m pip install pluggy>=1.5,<2.0; python_version >= "3.8" pywin32>=306; sys_platform == 'win32'`,
  ]);
  expect(pytest).toMatch(/^1 passed/m);
  const installed = execFileSync('.venv/bin/python', ['-m', 'pip', 'list', '--format=freeze'], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect(installed).toMatch(/^pytest==8\.3\.4$/m);
  expect(installed).toMatch(/^pluggy==1\./m);
  expect(installed).not.toMatch(/^pywin32==/m);
}, 300_000);
