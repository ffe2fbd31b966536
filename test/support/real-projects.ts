import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gradleSetupArgv } from '../../analysis/setup/gradle-setup';
import type { LoopRequestBody } from '../../domain/loop-request';

// Small but real projects, one per ecosystem, each with one real dependency from its registry, a bug and
// a failing test (issue 9). Lockfiles are resolved on the host the first time (with the tools the
// worker will use) and kept under os.tmpdir(), keyed by a hash of the files they are resolved from, so
// later runs make the same repository without asking the registries again.
//
// pnpm comes through corepack, which checks the signature of the pnpm it downloads against the npm
// registry's keys. A registry mirror that serves no signatures (this development machine's) needs
// COREPACK_INTEGRITY_KEYS=0, and a TLS-inspecting proxy needs its CA in NODE_EXTRA_CA_CERTS (corepack is
// a Node program: npm's `cafile` does not reach it). The host's lockfile resolution has both here, and
// the worker gets them through its environment (setup-environment.ts passes them on to set-up and gates).

export type Ecosystem = 'npm' | 'pnpm' | 'python' | 'go' | 'cargo' | 'maven' | 'gradle';

export interface RealProject {
  ecosystem: Ecosystem;
  /** The repository's files at its base commit: a bug, and a test that fails because of it. */
  files: Record<string, string>;
  /** What the maker writes: the fix, and nothing else. */
  fix: Record<string, string>;
  /** A test the fix makes pass, named as an acceptance criterion may name it. */
  testName: string;
  /** The same test as the API lists it among the tests gate's passed tests (qualified by its file where the runner says). */
  reportedTestName: string;
  /** The tests gate manifest inference should choose, and what its detail says about why. */
  testsArgv: string[];
  testsDetail: string;
  /** The set-up inference should choose. */
  setupArgv: string[][];
  /** Tests (passed) the gate reports once fixed. */
  passedTests: number;
}

/** What the worker needs for corepack on this machine (see above); the CA only when the host has one. */
export function corepackWorkerEnv(): Record<string, string> {
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  return { COREPACK_INTEGRITY_KEYS: '0', ...(ca ? { NODE_EXTRA_CA_CERTS: ca } : {}) };
}

export const PNPM_VERSION = '9.15.4';

/**
 * How long a test waits for a loop whose set-up downloads from the registries, and the test's own timeout.
 * Here such a loop takes 15–110 s; on a loaded CI host with a slow mirror one took 4× that (go 240 s,
 * python's set-up 120 s twice, pnpm's 183 s) and the sixth loop of real-projects missed a 420 s wait.
 */
export const REGISTRY_LOOP_WAIT_MS = 900_000;
export const REGISTRY_TEST_TIMEOUT_MS = REGISTRY_LOOP_WAIT_MS + 60_000;

// ---------------------------------------------------------------- npm + jest (package-lock.json) ------
// Its loop is in setup.e2e.test.ts; here for the set-up benchmark, which covers every ecosystem.

export function npmProject(): RealProject {
  const { packageManager: _, ...pkg } = { ...PNPM_PACKAGE, name: 'cart-npm' };
  const packageJson = `${JSON.stringify(pkg, null, 2)}\n`;
  const pnpm = pnpmProject();
  const { 'pnpm-lock.yaml': _lock, 'package.json': _pkg, ...rest } = pnpm.files;
  return {
    ...pnpm,
    ecosystem: 'npm',
    files: {
      'package.json': packageJson,
      'package-lock.json': cachedLockfile('npm', { 'package.json': packageJson }, 'package-lock.json', (dir) =>
        execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], {
          cwd: dir,
          stdio: 'pipe',
          timeout: 240_000,
        }),
      ),
      ...rest,
    },
    testsArgv: ['npm', 'test'],
    testsDetail: 'package.json scripts.test, run with npm (package-lock.json)',
    setupArgv: [['npm', 'ci', '--no-audit', '--no-fund']],
  };
}

// ---------------------------------------------------------------- pnpm + jest (packageManager) --------

const PNPM_PACKAGE = {
  name: 'cart',
  version: '1.0.0',
  private: true,
  packageManager: `pnpm@${PNPM_VERSION}`,
  scripts: { test: 'jest' },
  devDependencies: { jest: '29.7.0' },
};

/** The pnpm-lock.yaml pnpm (through corepack, as set-up runs it) resolves for `manifests`, cached like every lockfile. */
export function pnpmLockfile(name: string, manifests: Record<string, string>): string {
  return cachedLockfile(name, manifests, 'pnpm-lock.yaml', (dir) =>
    execFileSync('corepack', ['pnpm', 'install', '--lockfile-only'], {
      cwd: dir,
      stdio: 'pipe',
      timeout: 240_000,
      env: {
        ...process.env,
        ...corepackWorkerEnv(),
        COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
        COREPACK_ENABLE_AUTO_PIN: '0',
      },
    }),
  );
}

export function pnpmProject(): RealProject {
  const packageJson = `${JSON.stringify(PNPM_PACKAGE, null, 2)}\n`;
  return {
    ecosystem: 'pnpm',
    files: {
      'package.json': packageJson,
      'pnpm-lock.yaml': pnpmLockfile('pnpm', { 'package.json': packageJson }),
      'src/cart.js': 'exports.total = (prices, discount) => prices.reduce((a, b) => a + b, 0) + discount;\n',
      'src/format.js': 'exports.money = (cents) => `$${(cents / 100).toFixed(2)}`;\n',
      // Two test files: jest names its tests only for a single file unless asked (the JSON report the
      // service adds to the tests gate).
      'test/cart.test.js': [
        "const { total } = require('../src/cart');",
        "describe('total', () => {",
        "  test('adds the prices', () => expect(total([100, 250], 0)).toBe(350));",
        "  test('takes the discount off', () => expect(total([100, 250], 50)).toBe(300));",
        '});',
        '',
      ].join('\n'),
      'test/format.test.js':
        "const { money } = require('../src/format');\ntest('formats cents as dollars', () => expect(money(1999)).toBe('$19.99'));\n",
    },
    fix: { 'src/cart.js': 'exports.total = (prices, discount) => prices.reduce((a, b) => a + b, 0) - discount;\n' },
    // jest's JSON report names a test `<file> > <describe> > … > <title>`; an acceptance criterion may
    // leave out the leading parts.
    testName: 'total > takes the discount off',
    reportedTestName: 'test/cart.test.js > total > takes the discount off',
    testsArgv: ['pnpm', 'test'],
    testsDetail: `package.json scripts.test, run with pnpm (packageManager pnpm@${PNPM_VERSION})`,
    setupArgv: [['corepack', 'pnpm', 'install', '--frozen-lockfile']],
    passedTests: 3,
  };
}

// ---------------------------------------------------------------- Python: pytest only in tox.ini -------

export const PYTEST_VERSION = '8.3.4';

export function pythonProject(): RealProject {
  return {
    ecosystem: 'python',
    files: {
      'pyproject.toml': [
        '[build-system]',
        'requires = ["setuptools>=64"]',
        'build-backend = "setuptools.build_meta"',
        '',
        '[project]',
        'name = "tempconv"',
        'version = "0.1.0"',
        'requires-python = ">=3.8"',
        '',
        '[tool.setuptools]',
        'packages = ["tempconv"]',
        '',
      ].join('\n'),
      // pytest is only a tox dependency, and its only configuration is here: without `testpaths`, pytest
      // would also look outside tests/.
      'tox.ini': `[tox]\nenv_list = py3\n\n[testenv]\ndeps =\n    pytest==${PYTEST_VERSION}\ncommands = pytest\n\n[pytest]\ntestpaths = tests\n`,
      'tempconv/__init__.py': 'def to_fahrenheit(celsius):\n    return celsius * 9 / 5 - 32\n',
      // tests/ has no __init__.py: `import tempconv` works only through the editable install set-up made.
      'tests/test_convert.py': [
        'from tempconv import to_fahrenheit',
        '',
        '',
        'def test_freezing_point():',
        '    assert to_fahrenheit(0) == 32',
        '',
        '',
        'def test_boiling_point():',
        '    assert to_fahrenheit(100) == 212',
        '',
      ].join('\n'),
    },
    fix: { 'tempconv/__init__.py': 'def to_fahrenheit(celsius):\n    return celsius * 9 / 5 + 32\n' },
    // pytest -rA: `PASSED <node id>`.
    testName: 'tests/test_convert.py::test_boiling_point',
    reportedTestName: 'tests/test_convert.py::test_boiling_point',
    testsArgv: ['python3', '-m', 'pytest', '-rA'],
    testsDetail: 'pytest: tox.ini [pytest], run with no lockfile, python3 -m',
    setupArgv: [
      ['python3', '-m', 'venv', '.venv'],
      ['.venv/bin/python', '-m', 'pip', 'install', '-e', '.'],
      ['.venv/bin/python', '-m', 'pip', 'install', `pytest==${PYTEST_VERSION}`],
    ],
    passedTests: 2,
  };
}

// ---------------------------------------------------------------- Go: one module dependency ------------

export function goProject(): RealProject {
  const goMod = 'module example.com/labels\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n';
  const source = (sep: string) =>
    [
      'package labels',
      '',
      'import "github.com/google/uuid"',
      '',
      '// Label names a resource: its kind, then its id.',
      'func Label(kind string, id uuid.UUID) string {',
      `\treturn kind + "${sep}" + id.String()`,
      '}',
      '',
      '// New labels a fresh resource.',
      'func New(kind string) string {',
      '\treturn Label(kind, uuid.New())',
      '}',
      '',
    ].join('\n');
  const tests = [
    'package labels',
    '',
    'import (',
    '\t"testing"',
    '',
    '\t"github.com/google/uuid"',
    ')',
    '',
    'func TestLabel(t *testing.T) {',
    '\tid := uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")',
    '\tif got := Label("user", id); got != "user:6ba7b810-9dad-11d1-80b4-00c04fd430c8" {',
    '\t\tt.Fatalf("Label = %q", got)',
    '\t}',
    '}',
    '',
    'func TestNewIsUnique(t *testing.T) {',
    '\tif New("job") == New("job") {',
    '\t\tt.Fatal("two labels are equal")',
    '\t}',
    '}',
    '',
  ].join('\n');
  const files = { 'go.mod': goMod, 'labels.go': source('-'), 'labels_test.go': tests };
  return {
    ecosystem: 'go',
    files: {
      ...files,
      'go.sum': cachedLockfile('go', files, 'go.sum', (dir) =>
        execFileSync('go', ['mod', 'tidy'], { cwd: dir, stdio: 'pipe', timeout: 180_000 }),
      ),
    },
    fix: { 'labels.go': source(':') },
    // go test -json: `<package>/<Test>`.
    testName: 'example.com/labels/TestLabel',
    reportedTestName: 'example.com/labels/TestLabel',
    testsArgv: ['go', 'test', '-json', './...'],
    testsDetail: 'go.mod: go test -json',
    setupArgv: [['go', 'mod', 'download']],
    passedTests: 2,
  };
}

// ---------------------------------------------------------------- Cargo: one crate dependency ---------

export const ITOA_VERSION = '1.0.19';

export function cargoProject(): RealProject {
  const manifest = `[package]\nname = "tally"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nitoa = "=${ITOA_VERSION}"\n`;
  const source = (prefix: string) =>
    [
      '/// A count as shown on a tally board: `#` and the number.',
      'pub fn tally(n: u64) -> String {',
      '    let mut buffer = itoa::Buffer::new();',
      `    format!("${prefix}{}", buffer.format(n))`,
      '}',
      '',
      '#[cfg(test)]',
      'mod tests {',
      '    use super::tally;',
      '',
      '    #[test]',
      '    fn shows_the_count() {',
      '        assert_eq!(tally(42), "#42");',
      '    }',
      '',
      '    #[test]',
      '    fn shows_large_counts() {',
      '        assert!(tally(u64::MAX).ends_with("18446744073709551615"));',
      '    }',
      '}',
      '',
    ].join('\n');
  const files = { 'Cargo.toml': manifest, 'src/lib.rs': source('No. ') };
  return {
    ecosystem: 'cargo',
    files: {
      ...files,
      'Cargo.lock': cachedLockfile('cargo', files, 'Cargo.lock', (dir) =>
        execFileSync('cargo', ['generate-lockfile'], { cwd: dir, stdio: 'pipe', timeout: 180_000 }),
      ),
    },
    fix: { 'src/lib.rs': source('#') },
    // libtest: `test tests::shows_the_count ... ok`, named by its crate from cargo's `Running … (deps/tally-…)`.
    testName: 'tests::shows_the_count',
    reportedTestName: 'tally::tests::shows_the_count',
    testsArgv: ['cargo', 'test'],
    testsDetail: 'Cargo.toml, cargo test',
    setupArgv: [['cargo', 'fetch']],
    passedTests: 2,
  };
}

// ---------------------------------------------------------------- Maven: JUnit 5 and one dependency ----
// Maven has no lockfile: pom.xml pins every version, the plugins' included.

/**
 * A Maven project's pom.xml: Java 17, the `dependencies`, and the compiler and surefire plugins pinned
 * (Maven 3.8's default surefire predates JUnit 5).
 */
export function mavenPom(
  artifactId: string,
  dependencies: Array<{ groupId: string; artifactId: string; version: string; scope?: 'test' }>,
): string {
  const plugin = (id: string, version: string) => [
    '      <plugin>',
    '        <groupId>org.apache.maven.plugins</groupId>',
    `        <artifactId>${id}</artifactId>`,
    `        <version>${version}</version>`,
    '      </plugin>',
  ];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<project xmlns="http://maven.apache.org/POM/4.0.0">',
    '  <modelVersion>4.0.0</modelVersion>',
    '  <groupId>example</groupId>',
    `  <artifactId>${artifactId}</artifactId>`,
    '  <version>1.0.0</version>',
    '  <properties>',
    '    <maven.compiler.release>17</maven.compiler.release>',
    '    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>',
    '  </properties>',
    '  <dependencies>',
    ...dependencies.flatMap((d) => [
      '    <dependency>',
      `      <groupId>${d.groupId}</groupId>`,
      `      <artifactId>${d.artifactId}</artifactId>`,
      `      <version>${d.version}</version>`,
      ...(d.scope ? [`      <scope>${d.scope}</scope>`] : []),
      '    </dependency>',
    ]),
    '  </dependencies>',
    '  <build>',
    '    <plugins>',
    ...plugin('maven-compiler-plugin', '3.13.0'),
    ...plugin('maven-surefire-plugin', '3.5.2'),
    '    </plugins>',
    '  </build>',
    '</project>',
    '',
  ].join('\n');
}

export function mavenProject(): RealProject {
  const pom = mavenPom('labels', [
    { groupId: 'org.apache.commons', artifactId: 'commons-lang3', version: '3.17.0' },
    { groupId: 'org.junit.jupiter', artifactId: 'junit-jupiter', version: '5.14.1', scope: 'test' },
  ]);
  const source = (separator: string) =>
    [
      'package com.example.labels;',
      '',
      'import org.apache.commons.lang3.StringUtils;',
      '',
      '/** Shelf labels: a product name, capitalised, and its code. */',
      'public final class Labels {',
      '  private Labels() {}',
      '',
      '  public static String label(String name, int code) {',
      `    return StringUtils.capitalize(name) + "${separator}" + code;`,
      '  }',
      '}',
      '',
    ].join('\n');
  const tests = [
    'package com.example.labels;',
    '',
    'import static org.junit.jupiter.api.Assertions.assertEquals;',
    'import static org.junit.jupiter.api.Assertions.assertTrue;',
    '',
    'import org.junit.jupiter.api.Test;',
    '',
    'class LabelsTest {',
    '  @Test',
    '  void capitalisesTheName() {',
    '    assertEquals("Tea: 7", Labels.label("tea", 7));',
    '  }',
    '',
    '  @Test',
    '  void keepsTheCode() {',
    '    assertTrue(Labels.label("rice", 42).endsWith("42"));',
    '  }',
    '}',
    '',
  ].join('\n');
  const main = 'src/main/java/com/example/labels/Labels.java';
  return {
    ecosystem: 'maven',
    files: { 'pom.xml': pom, [main]: source(' - '), 'src/test/java/com/example/labels/LabelsTest.java': tests },
    fix: { [main]: source(': ') },
    // As surefire's -Dtest names it; the API lists it as `<class> > <method>`.
    testName: 'LabelsTest#capitalisesTheName',
    reportedTestName: 'com.example.labels.LabelsTest > capitalisesTheName',
    testsArgv: ['mvn', '--batch-mode', '--offline', 'test'],
    testsDetail: 'pom.xml: mvn test, offline',
    setupArgv: [
      [
        'mvn',
        '--batch-mode',
        '--no-transfer-progress',
        'test',
        '-Dtest=*#engineeringLoopResolvesTheTestProvider',
        '-Dsurefire.failIfNoSpecifiedTests=false',
        '-DfailIfNoTests=false',
      ],
    ],
    passedTests: 2,
  };
}

// ---------------------------------------------------------------- Gradle: JUnit 4, a runtime-only binding
// Debian's Gradle 4.4.1 (scripts/install-gradle.sh), the newest this build machine can run: JUnit 4, since
// JUnit 5 needs Gradle 4.6's useJUnitPlatform(). The tests' logging binding is a runtime-only dependency,
// which compiling the tests does not resolve: set-up must fetch it for the offline test task.

export function gradleProject(): RealProject {
  const build = [
    "apply plugin: 'java'",
    '',
    'repositories { mavenCentral() }',
    '',
    'dependencies {',
    "  implementation 'org.slf4j:slf4j-api:2.0.16'",
    "  testImplementation 'junit:junit:4.13.2'",
    "  testRuntimeOnly 'org.slf4j:slf4j-simple:2.0.16'",
    '}',
    '',
  ].join('\n');
  const source = (operator: string) =>
    [
      'package ex;',
      '',
      'import org.slf4j.Logger;',
      'import org.slf4j.LoggerFactory;',
      '',
      '/** Arithmetic for the till. */',
      'public final class Calc {',
      '  private static final Logger LOG = LoggerFactory.getLogger(Calc.class);',
      '',
      '  private Calc() {}',
      '',
      '  public static int add(int a, int b) {',
      '    LOG.debug("add {} {}", a, b);',
      `    return a ${operator} b;`,
      '  }',
      '',
      '  public static int multiply(int a, int b) {',
      '    return a * b;',
      '  }',
      '}',
      '',
    ].join('\n');
  const tests = [
    'package ex;',
    '',
    'import static org.junit.Assert.assertEquals;',
    '',
    'import org.junit.Test;',
    '',
    'public class CalcTest {',
    '  @Test',
    '  public void adds() {',
    '    assertEquals(5, Calc.add(2, 3));',
    '  }',
    '',
    '  @Test',
    '  public void multiplies() {',
    '    assertEquals(6, Calc.multiply(2, 3));',
    '  }',
    '}',
    '',
  ].join('\n');
  const main = 'src/main/java/ex/Calc.java';
  return {
    ecosystem: 'gradle',
    files: { 'build.gradle': build, [main]: source('-'), 'src/test/java/ex/CalcTest.java': tests },
    fix: { [main]: source('+') },
    // As Gradle's --tests names it; the API lists it as `<class> > <method>`.
    testName: 'CalcTest.adds',
    reportedTestName: 'ex.CalcTest > adds',
    testsArgv: ['gradle', '--no-daemon', '--console=plain', '--offline', 'test'],
    testsDetail: 'build.gradle: gradle test, offline',
    setupArgv: [gradleSetupArgv(['gradle', '--no-daemon', '--console=plain'])],
    passedTests: 2,
  };
}

export const REAL_PROJECTS: Record<Ecosystem, () => RealProject> = {
  npm: npmProject,
  pnpm: pnpmProject,
  python: pythonProject,
  go: goProject,
  cargo: cargoProject,
  maven: mavenProject,
  gradle: gradleProject,
};

// ---------------------------------------------------------------- repositories and requests -----------

/** A git repository holding exactly `files`, committed on main. */
export function realProjectRepo(project: Pick<RealProject, 'files'> & { ecosystem: string }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `loop-real-${project.ecosystem}-`));
  for (const [file, text] of Object.entries(project.files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=F', '-c', 'user.email=f@example.invalid', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '--all');
  git('commit', '--quiet', '-m', `fixture: ${project.ecosystem} project`);
  return dir;
}

/** A fresh submission: no gates and no set-up, so both come from the repository. */
export function realProjectRequest(
  repo: string,
  project: Pick<RealProject, 'testName'> & { ecosystem: string },
  makerArgv: string[],
): LoopRequestBody {
  return {
    repository: { url: repo, baseRef: 'main' },
    contract: {
      objective: `Fix the bug the failing ${project.ecosystem} test shows.`,
      outcome: 'The code does what its tests say.',
      acceptanceCriteria: [
        {
          id: 'AC-1',
          statement: `the test ${project.testName} passes`,
          verification: { type: 'test', name: project.testName },
        },
        { id: 'AC-2', statement: 'the test suite passes', verification: { type: 'gate', gate: 'tests' } },
      ],
      constraints: ['Do not change the tests.'],
    },
    maker: { backend: 'command', argv: makerArgv, timeoutSeconds: 300 },
  };
}

/**
 * `lockfile` as `resolve` writes it into a directory holding `inputs`, resolved once per distinct
 * inputs and kept under os.tmpdir() for later runs (written atomically: jest may run files in parallel).
 */
export function cachedLockfile(
  name: string,
  inputs: Record<string, string>,
  lockfile: string,
  resolve: (dir: string) => unknown,
): string {
  const hash = createHash('sha256')
    .update(JSON.stringify(Object.entries(inputs).sort()))
    .digest('hex')
    .slice(0, 16);
  const cached = path.join(os.tmpdir(), 'engineering-loop-real-projects', `${name}-${hash}`, lockfile);
  if (!fs.existsSync(cached)) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `real-project-${name}-`));
    try {
      for (const [file, text] of Object.entries(inputs)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      resolve(dir);
      fs.mkdirSync(path.dirname(cached), { recursive: true });
      const tmp = `${cached}.${process.pid}.tmp`;
      fs.copyFileSync(path.join(dir, lockfile), tmp);
      fs.renameSync(tmp, cached);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return fs.readFileSync(cached, 'utf8');
}
