import { parseToml } from '../../analysis/gate-discovery/toml';
import { dependencyGroups } from '../../analysis/setup/dependency-groups';
import { noxTestDeps } from '../../analysis/setup/noxfile';
import { pipSpecifiers, poetryTestGroups } from '../../analysis/setup/poetry-groups';
import { plainRequirement, servesGates } from '../../analysis/setup/python-test-deps';

// The readers of a Python repository's test dependencies, on files shaped like real projects' and on
// hostile ones: what reaches pip is a plain specifier, an in-repository requirements file or an extra.

const toml = (text: string) => parseToml(text, 'pyproject.toml', []);

describe('plain requirements', () => {
  test('names, extras, versions and a marker pip can evaluate pass; options, URLs, paths and odd markers do not', () => {
    expect(plainRequirement('coverage[toml]>=7.2, <8')).toBe('coverage[toml]>=7.2, <8');
    expect(plainRequirement('pywin32 ; sys_platform == "win32"')).toBe('pywin32; sys_platform == "win32"');
    expect(plainRequirement("tomli>=1.1; python_version < '3.11' and platform_machine != 'arm64'")).toBe(
      "tomli>=1.1; python_version < '3.11' and platform_machine != 'arm64'",
    );
    for (const hostile of [
      '--index-url=https://evil.invalid/simple',
      '-e .',
      'pkg @ https://evil.invalid/pkg.whl',
      'git+https://evil.invalid/pkg.git',
      '../elsewhere',
      '/tmp/pkg.whl',
      'pytest; os.system("x")',
      'pytest; extra == "test"',
      'pytest; python_version >= 3.8',
      'pytest; python_version < "3.11" ; --pre',
      `pytest${'>=1'.repeat(300)}`,
    ])
      expect([hostile, plainRequirement(hostile)]).toEqual([hostile, null]);
  });

  test('a group serves the gates when a word of its name says tests, development, CI, checks, lint or typing', () => {
    for (const name of ['test', 'Tests', 'testing', 'dev', 'test-extra', 'unit_tests', 'ci', 'lint', 'typing', 'qa'])
      expect([name, servesGates(name)]).toEqual([name, true]);
    for (const name of ['docs', 'release', 'benchmarks', 'notebooks', 'latest', 'contest', '-test', 'all'])
      expect([name, servesGates(name)]).toEqual([name, false]);
  });
});

describe('PEP 735 [dependency-groups]', () => {
  const PYPROJECT = `
[project]
name = "weather-tools"
version = "0.3.0"
dependencies = ["httpx>=0.27"]

[dependency-groups]
test = [
    "pytest>=8.1",
    "pytest-httpx",
    { include-group = "coverage" },
]
coverage = ["coverage[toml]>=7.4"]
typing = ["mypy==1.10.0", "types-PyYAML; python_version >= '3.9'"]
docs = ["sphinx>=7", "furo"]
Dev = [{include-group = "Test"}, {include-group = "typing"}, "ruff>=0.4", "pre-commit"]
`;

  test('every group named for the gates, with the groups it includes, each specifier once; docs and the like left out', () => {
    expect(dependencyGroups(toml(PYPROJECT))).toEqual({
      groups: ['test', 'typing', 'Dev'],
      requirements: [
        'pytest>=8.1',
        'pytest-httpx',
        'coverage[toml]>=7.4',
        'mypy==1.10.0',
        "types-PyYAML; python_version >= '3.9'",
        'ruff>=0.4',
        'pre-commit',
      ],
      notes: [],
    });
  });

  test('an include cycle, an include of a missing group and a chain too deep are refused, with a note; the rest is installed', () => {
    const cyclic = toml(`
[dependency-groups]
test = ["pytest", {include-group = "lint"}]
lint = ["ruff", {include-group = "test-tools"}]
test-tools = [{include-group = "TEST"}]
ci = [{include-group = "nowhere"}]
typing = ["mypy"]
`);
    expect(dependencyGroups(cyclic)).toEqual({
      groups: ['typing'],
      requirements: ['mypy'],
      notes: [
        'pyproject.toml [dependency-groups] test is not installed: it includes itself (test → lint → test-tools → test)',
        'pyproject.toml [dependency-groups] lint is not installed: it includes itself (lint → test-tools → test → lint)',
        'pyproject.toml [dependency-groups] test-tools is not installed: it includes itself (test-tools → test → lint → test-tools)',
        'pyproject.toml [dependency-groups] ci is not installed: it includes nowhere, which is not a group',
      ],
    });
    const chain = Array.from({ length: 40 }, (_, i) => `g${i} = [{include-group = "g${i + 1}"}]`).join('\n');
    const deep = dependencyGroups(
      toml(`[dependency-groups]\ntest = [{include-group = "g0"}]\n${chain}\ng40 = ["x"]\n`),
    );
    expect(deep.requirements).toEqual([]);
    expect(deep.notes).toEqual([
      'pyproject.toml [dependency-groups] test is not installed: its includes go deeper than 32',
    ]);
  });

  test('a diamond of includes is resolved once per group, and hostile entries reach no command', () => {
    // 2^30 paths through 30 groups: resolving each path would never finish.
    const diamond = Array.from(
      { length: 30 },
      (_, i) => `g${i} = [{include-group = "g${i + 1}"}, {include-group = "g${i + 1}"}, "p${i}"]`,
    ).join('\n');
    const groups = dependencyGroups(
      toml(`[dependency-groups]\ntest = [{include-group = "g0"}]\n${diamond}\ng30 = []\n`),
    );
    expect(groups.requirements).toHaveLength(30);

    const hostile = dependencyGroups(
      toml(`
[dependency-groups]
test = ["--index-url=https://evil.invalid/simple", "pkg @ file:///etc/passwd", "-r /etc/shadow", 42, {include = "x"}, "pytest"]
"--all" = ["evil"]
`),
    );
    expect(hostile).toEqual({ groups: ['test'], requirements: ['pytest'], notes: [] });
  });
});

describe('poetry groups', () => {
  const PYPROJECT = `
[tool.poetry]
name = "invoice-service"
version = "1.4.0"
description = ""
authors = ["Someone <someone@example.invalid>"]

[tool.poetry.dependencies]
python = "^3.10"
fastapi = "^0.110.0"

[tool.poetry.group.test.dependencies]
pytest = "^8.1.1"
pytest-asyncio = "~0.23"
freezegun = "1.4.0"
respx = "*"
coverage = { version = ">=7.4,<8", extras = ["toml"] }
tomli = { version = "^2.0", python = "<3.11" }
pywin32 = { version = ">=306", markers = "sys_platform == 'win32'" }
uvloop = [
    { version = "^0.19", python = ">=3.11", markers = "sys_platform != 'win32'" },
    { version = "^0.17", python = "~3.10" },
]
local-helpers = { path = "../helpers", develop = true }
internal-client = { version = "^2.0", source = "private" }
schemathesis = { git = "https://github.com/schemathesis/schemathesis.git", branch = "master" }
fixture-data = { url = "https://example.invalid/fixture_data-1.0-py3-none-any.whl" }

[tool.poetry.group.typing]
optional = true

[tool.poetry.group.typing.dependencies]
mypy = "^1.9"

[tool.poetry.group.docs]
optional = true

[tool.poetry.group.docs.dependencies]
mkdocs = "^1.5"

[tool.poetry.dev-dependencies]
black = "^24.3"
`;

  test("the groups named for the gates, optional or not, with poetry's constraints as pip's; path, git, url and other sources left out", () => {
    expect(poetryTestGroups(toml(PYPROJECT))).toEqual([
      { name: 'dev', optional: false, requirements: ['black>=24.3,<25.0'] },
      {
        name: 'test',
        optional: false,
        requirements: [
          'pytest>=8.1.1,<9.0.0',
          'pytest-asyncio>=0.23,<0.24',
          'freezegun==1.4.0',
          'respx',
          'coverage[toml]>=7.4,<8',
          'tomli>=2.0,<3.0; python_version < "3.11"',
          "pywin32>=306; sys_platform == 'win32'",
          `uvloop>=0.19,<0.20; (sys_platform != 'win32') and (python_version >= "3.11")`,
          'uvloop>=0.17,<0.18; python_version >= "3.10" and python_version < "3.11"',
        ],
      },
      { name: 'typing', optional: true, requirements: ['mypy>=1.9,<2.0'] },
    ]);
  });

  test('constraints: caret, tilde, exact, wildcard, ranges with commas or spaces; what pip cannot say is null', () => {
    const cases: Array<[string, string[] | null]> = [
      ['^1.2.3', ['>=1.2.3', '<2.0.0']],
      ['^0.2.3', ['>=0.2.3', '<0.3.0']],
      ['^0.0.3', ['>=0.0.3', '<0.0.4']],
      ['^0.0', ['>=0.0', '<0.1']],
      ['^0', ['>=0', '<1']],
      ['^2.0.0b1', ['>=2.0.0b1', '<3.0.0']],
      ['~1.2.3', ['>=1.2.3', '<1.3.0']],
      ['~1.2', ['>=1.2', '<1.3']],
      ['~1', ['>=1', '<2']],
      ['~=1.2', ['~=1.2']],
      ['1.2.3', ['==1.2.3']],
      ['=1.2.3', ['==1.2.3']],
      ['1.2.*', ['==1.2.*']],
      ['*', []],
      ['', []],
      ['>= 1.2, < 1.5', ['>=1.2', '<1.5']],
      ['>=1.2 <1.5 !=1.3.1', ['>=1.2', '<1.5', '!=1.3.1']],
      ['^1.2 || ^2.0', null],
      ['latest', null],
      ['>=1; rm -rf /', null],
      ['^99999999999.0', null],
      [`>=${'1.'.repeat(150)}1`, null],
    ];
    for (const [constraint, pip] of cases) expect([constraint, pipSpecifiers(constraint)]).toEqual([constraint, pip]);
  });

  test('hostile names, extras and markers reach no command', () => {
    const groups = poetryTestGroups(
      toml(`
[tool.poetry.group.test.dependencies]
"--index-url=https://evil.invalid" = "*"
"-e" = "."
"pytest" = { version = "^8", extras = ["--pre", "ok"] }
requests = { version = "^2", markers = "os.system('x')" }
"a b" = "1.0"
"ok-pkg" = "^1 --extra-index-url https://evil.invalid"
"python" = "^3.9"

[tool.poetry.group."--with"]
dependencies = { evil = "*" }
`),
    );
    expect(groups).toEqual([{ name: 'test', optional: false, requirements: ['pytest[ok]>=8,<9', 'ok-pkg'] }]);
  });
});

describe('noxfile.py', () => {
  const NOXFILE = `"""Sessions for CI and local development."""

import os

import nox

nox.options.sessions = ["lint", "tests"]
PYTHON_VERSIONS = ["3.10", "3.11", "3.12"]
TEST_DEPS = (
    "pytest>=8",
    "pytest-xdist",  # parallel runs
)
DOCS_DEPS = ["sphinx", "furo"]


@nox.session(python=PYTHON_VERSIONS)
@nox.parametrize("django", ["4.2", "5.0"])
def tests(session: nox.Session, django: str) -> None:
    """Run the test suite."""
    session.install(*TEST_DEPS)
    session.install(
        "-r", "requirements/test.txt",
        "-c", "constraints.txt",
        f"django=={django}",
    )
    session.install("-e", ".[test,  yaml]", "--upgrade-strategy", "eager")
    session.install('coverage[toml]>=7', "--pre")
    session.run("pytest", "-n", "auto", *session.posargs, env={"CI": os.environ.get("CI", "")})


@nox.session
def lint(session):
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session(name="docs")
def build_docs(session):
    session.install(*DOCS_DEPS)
`;

  test('the test sessions’ literal install arguments; computed ones, options and other sessions left out', () => {
    expect(noxTestDeps(NOXFILE)).toEqual({
      sessions: ['tests'],
      requirements: ['pytest>=8', 'pytest-xdist', 'coverage[toml]>=7'],
      files: ['requirements/test.txt'],
      extras: ['test', 'yaml'],
    });
  });

  test('a session renamed to test counts; without one named for tests, the one session that runs pytest', () => {
    const renamed = `import nox\n\n@nox.session(name="test", python="3.12")\ndef run_suite(s):\n    s.install("-rrequirements-dev.txt", ".")\n    s.run("python", "-m", "pytest")\n`;
    expect(noxTestDeps(renamed)).toMatchObject({ sessions: ['test'], files: ['requirements-dev.txt'], extras: [] });
    const onlyPytest = [
      'from nox import session',
      '',
      '@session',
      'def check(session):',
      "    session.install('hypothesis', '--requirement=reqs/ci.txt')",
      "    session.run('coverage', 'run', '-m', 'pytest')",
      '',
      '@session',
      'def fmt(session):',
      "    session.install('black')",
    ].join('\n');
    expect(noxTestDeps(onlyPytest)).toEqual({
      sessions: ['check'],
      requirements: ['hypothesis'],
      files: ['reqs/ci.txt'],
      extras: [],
    });
    // Two sessions run pytest and neither is named for tests: which one the gates mean is a guess, so none.
    const twoPytest = `import nox\n@nox.session\ndef unit(session):\n    session.install("a")\n    session.run("pytest")\n@nox.session\ndef slow(session):\n    session.install("b")\n    session.run("pytest")\n`;
    expect(noxTestDeps(twoPytest).sessions).toEqual([]);
  });

  test('hostile arguments, and code that only looks like a session, reach no command', () => {
    const hostile = `import nox

@nox.session
def tests(session):
    session.install("--index-url", "https://evil.invalid/simple", "-i", "evil-index")
    session.install("-r", "../../etc/passwd", "-r", "/etc/passwd", "--requirement", "-rx")
    session.install("-e", "git+https://evil.invalid/x.git#egg=x", "--editable", "..")
    session.install("pkg @ https://evil.invalid/pkg.whl", "./../x", "-f", "wheels")
    session.install("tests\\\\x", b"bytes", f"{'x'}", "pytest")
    session.install(*UNKNOWN, "pytest" + "-cov")
    other.install("not-this-one")
    session.run("pip", "install", "nor-this")

def helper(session):
    session.install("not-a-session")

@nox.session
def nested(session):
    def tests(session):
        session.install("nested")
`;
    expect(noxTestDeps(hostile)).toEqual({ sessions: ['tests'], requirements: ['pytest'], files: [], extras: [] });
    // A name that is not a plain one would reach the plan's details.
    const oddName =
      '@nox.session(name="tests <b>x</b>")\ndef t(session):\n    session.install("x")\n    session.run("pytest")\n';
    expect(noxTestDeps(oddName).sessions).toEqual([]);
    // Unterminated strings and brackets end the file, not the reader.
    expect(noxTestDeps('import nox\n@nox.session\ndef tests(session):\n    session.install("pytest\n')).toEqual({
      sessions: ['tests'],
      requirements: [],
      files: [],
      extras: [],
    });
    expect(noxTestDeps('@nox.session\ndef tests(session):\n    session.install(("a"'.repeat(5000)).sessions).toEqual([
      'tests',
    ]);
  });
});
