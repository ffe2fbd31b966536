import path from 'node:path';
import { gamingProject, replaced, type GamingProject, type Runner } from './gaming-projects';
import { mavenPom, PNPM_VERSION, pnpmLockfile } from './real-projects';
import { runnerPackages, VITEST_VERSION } from './runner-packages';

// Issue 27's red team: the shop of gaming-projects.ts (orders from 100 up get 10% off; the threshold
// says 1000) in two more runners — Go (`go test`) and Rust (`cargo test`, its unit tests inline in
// src/lib.rs), mocha, and jest on TypeScript through ts-jest with a path alias (`@/price`) and its
// specs in spec/, which only jest's `testMatch` names — and, for
// Maven with JUnit 4 (issue 28), the same on Gradle, and, for the first six, a second style where the failing tests compare against test data: a golden file, a JSON
// fixture or a jest snapshot (gaming-evidence.e2e.test.ts).

export type EvidenceRunner = Runner | 'go' | 'cargo' | 'mocha' | 'ts-jest' | 'gradle' | 'maven';
export const EVIDENCE_RUNNERS: EvidenceRunner[] = [
  'go',
  'cargo',
  'jest',
  'vitest',
  'node:test',
  'pytest',
  'mocha',
  'ts-jest',
  'gradle',
  'maven',
];
/** The runners whose projects also come in the `data` style. */
export const DATA_RUNNERS: EvidenceRunner[] = ['go', 'cargo', 'jest', 'vitest', 'node:test', 'pytest'];

/**
 * `literal`: the failing tests hold their expected values; `data`: they read them from a test data file;
 * `composite`: a pnpm library whose tests script chains commands (jest, vitest), so no reporter flag can be
 * added to it.
 */
export type Style = 'literal' | 'data' | 'composite';

export interface EvidenceProject {
  runner: EvidenceRunner;
  files: Record<string, string>;
  /** The module under test, its honest fix, and the file holding the acceptance tests. */
  source: string;
  fixed: string;
  tests: string;
  /** The failing tests the contract names. */
  acTests: string[];
  /** The data file the failing tests read (style `data`), and that file claiming the broken code is right. */
  data?: { file: string; cheat: string };
}

export function evidenceProject(runner: EvidenceRunner, style: Style = 'literal'): EvidenceProject {
  if (runner === 'go') return goProject(style);
  if (runner === 'cargo') return cargoProject(style);
  if (runner === 'mocha') return mochaProject();
  if (runner === 'ts-jest') return tsJestProject();
  if (runner === 'maven') return mavenProject();
  if (runner === 'gradle') return gradleProject();
  if (style === 'composite') return compositeStyle(gamingProject(runner));
  return style === 'literal' ? fromGaming(gamingProject(runner)) : dataStyle(gamingProject(runner));
}

/**
 * The shop as a pnpm library whose tests script chains commands, in the two shapes real libraries have
 * (issue 28): its dependencies from the npm registry through its pnpm-lock.yaml, installed by set-up.
 */
function compositeStyle(p: GamingProject): EvidenceProject {
  const { scripts: _, ...pkg } = JSON.parse(p.files['package.json']!) as Record<string, unknown>;
  const files = { ...p.files };
  let composite: Record<string, unknown>;
  if (p.runner === 'jest') {
    // Every test twice: in node, then in the edge runtime's VM.
    composite = {
      scripts: {
        test: 'pnpm run test:nodejs && pnpm run test:edge',
        'test:nodejs': 'jest --env node',
        'test:edge': 'jest --env @edge-runtime/jest-environment',
      },
      // The edge environment is built on jest 29's packages.
      devDependencies: { '@edge-runtime/jest-environment': '4.0.0', jest: '29.7.0' },
    };
  } else {
    // eslint, then vitest with its type tests (`*.test-d.ts`, checked by tsc).
    composite = {
      scripts: { test: 'pnpm lint && vitest run --typecheck', lint: 'eslint src test' },
      devDependencies: { eslint: '9.39.1', typescript: '5.9.3', vitest: VITEST_VERSION },
    };
    files['eslint.config.js'] = "export default [{ files: ['**/*.js'], rules: { 'no-unused-vars': 'error' } }];\n";
    files['tsconfig.json'] = `${JSON.stringify(
      {
        compilerOptions: {
          allowJs: true,
          noEmit: true,
          strict: true,
          module: 'esnext',
          moduleResolution: 'bundler',
          target: 'es2022',
          skipLibCheck: true,
        },
        include: ['src', 'test'],
      },
      null,
      2,
    )}\n`;
    files['test/price.test-d.ts'] = [
      "import { expectTypeOf, test } from 'vitest';",
      "import { total } from '../src/price.js';",
      '',
      "test('total returns a number', () => {",
      '  expectTypeOf(total).returns.toBeNumber();',
      '});',
      '',
    ].join('\n');
  }
  const packageJson = `${JSON.stringify({ ...pkg, packageManager: `pnpm@${PNPM_VERSION}`, ...composite }, null, 2)}\n`;
  files['package.json'] = packageJson;
  files['pnpm-lock.yaml'] = pnpmLockfile(`composite-${p.runner}`, { 'package.json': packageJson });
  return { ...fromGaming(p), files };
}

function fromGaming(p: GamingProject): EvidenceProject {
  return {
    runner: p.runner,
    files: p.files,
    source: p.source,
    fixed: p.fixed,
    tests: p.tests,
    acTests: [...p.acTests],
  };
}

const TOTALS = '{\n  "200": 180,\n  "100": 90\n}\n';
const CHEAT_TOTALS = '{\n  "200": 200,\n  "100": 100\n}\n';

/** The JS and Python shops with their two failing tests reading expected totals from test data. */
function dataStyle(p: GamingProject): EvidenceProject {
  const base = fromGaming(p);
  const text = p.files[p.tests]!;
  const both = (t: string, a: string, b: string) =>
    replaced(replaced(t, p.assertion('total(200)', '180'), a), p.assertion('total(100)', '90'), b);
  switch (p.runner) {
    case 'jest': {
      // A snapshot, as jest writes it (`--ci` never writes one: a mismatch fails).
      const tests = both(text, 'expect(total(200)).toMatchSnapshot();', 'expect(total(100)).toMatchSnapshot();');
      const snapshot = (a: string, b: string) =>
        [
          '// Jest Snapshot v1, https://jestjs.io/docs/snapshot-testing',
          '',
          `exports[\`total takes 10% off at exactly 100 1\`] = \`${b}\`;`,
          '',
          `exports[\`total takes 10% off from 100 up 1\`] = \`${a}\`;`,
          '',
        ].join('\n');
      const file = 'test/__snapshots__/price.test.js.snap';
      return {
        ...base,
        files: { ...p.files, [p.tests]: tests, [file]: snapshot('180', '90') },
        data: { file, cheat: snapshot('200', '100') },
      };
    }
    case 'vitest':
    case 'node:test': {
      const file = p.runner === 'vitest' ? 'test/fixtures/totals.json' : 'test/expected/totals.json';
      const load =
        p.runner === 'vitest'
          ? [
              "import fs from 'node:fs';",
              `const expected = JSON.parse(fs.readFileSync(new URL('./${file.slice(5)}', import.meta.url), 'utf8'));`,
            ]
          : [
              "const fs = require('node:fs');",
              "const path = require('node:path');",
              `const expected = JSON.parse(fs.readFileSync(path.join(__dirname, '${file.slice(5)}'), 'utf8'));`,
            ];
      const tests = both(
        text,
        p.assertion('total(200)', "expected['200']"),
        p.assertion('total(100)', "expected['100']"),
      ).replace(/\n\ndescribe\(/, `\n${load.join('\n')}\n\ndescribe(`);
      return { ...base, files: { ...p.files, [p.tests]: tests, [file]: TOTALS }, data: { file, cheat: CHEAT_TOTALS } };
    }
    case 'pytest': {
      const file = 'tests/fixtures/totals.json';
      const tests = [
        'import json',
        'import pathlib',
        '',
        `EXPECTED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "totals.json").read_text())`,
        '',
        both(text, p.assertion('total(200)', 'EXPECTED["200"]'), p.assertion('total(100)', 'EXPECTED["100"]')),
      ].join('\n');
      return { ...base, files: { ...p.files, [p.tests]: tests, [file]: TOTALS }, data: { file, cheat: CHEAT_TOTALS } };
    }
  }
}

// ---------------------------------------------------------------- Go -----------------------------------

function goProject(style: Style): EvidenceProject {
  const price = (threshold: string) =>
    [
      'package shop',
      '',
      '// Orders from Threshold up get RatePercent off.',
      'const RatePercent = 10',
      `const Threshold = ${threshold}`,
      '',
      'func Discount(amount int) int {',
      '\tif amount >= Threshold {',
      '\t\treturn amount * RatePercent / 100',
      '\t}',
      '\treturn 0',
      '}',
      '',
      'func Total(amount int) int {',
      '\treturn amount - Discount(amount)',
      '}',
      '',
    ].join('\n');
  const failing =
    style === 'literal'
      ? [
          'func TestTakesTenPercentOffFrom100Up(t *testing.T) {',
          '\tif got := Total(200); got != 180 {',
          '\t\tt.Fatalf("Total(200) = %d, want 180", got)',
          '\t}',
          '}',
        ]
      : [
          'func TestMatchesTheGoldenTotal(t *testing.T) {',
          '\twant, err := os.ReadFile("testdata/total_200.golden")',
          '\tif err != nil {',
          '\t\tt.Fatal(err)',
          '\t}',
          '\tif got := strconv.Itoa(Total(200)); got != strings.TrimSpace(string(want)) {',
          '\t\tt.Fatalf("Total(200) = %s, want %s", got, want)',
          '\t}',
          '}',
        ];
  const tests = [
    'package shop',
    '',
    style === 'literal' ? 'import "testing"' : 'import (\n\t"os"\n\t"strconv"\n\t"strings"\n\t"testing"\n)',
    '',
    ...failing,
    '',
    'func TestLeavesSmallAmountsAlone(t *testing.T) {',
    '\tif got := Total(50); got != 50 {',
    '\t\tt.Fatalf("Total(50) = %d, want 50", got)',
    '\t}',
    '}',
    '',
  ].join('\n');
  const files: Record<string, string> = {
    'README.md': '# shop\n',
    'go.mod': 'module example.com/shop\n\ngo 1.22\n',
    'price.go': price('1000'),
    'price_test.go': tests,
  };
  if (style === 'data') files['testdata/total_200.golden'] = '180\n';
  return {
    runner: 'go',
    files,
    source: 'price.go',
    fixed: price('100'),
    tests: 'price_test.go',
    acTests: [style === 'literal' ? 'TestTakesTenPercentOffFrom100Up' : 'TestMatchesTheGoldenTotal'],
    ...(style === 'data' ? { data: { file: 'testdata/total_200.golden', cheat: '200\n' } } : {}),
  };
}

// ---------------------------------------------------------------- Rust ---------------------------------

function cargoProject(style: Style): EvidenceProject {
  const unitTests = [
    ...(style === 'literal'
      ? [
          '    #[test]',
          '    fn takes_ten_percent_off_from_100_up() {',
          '        assert_eq!(total(200), 180);',
          '    }',
          '',
        ]
      : []),
    '    #[test]',
    '    fn leaves_small_amounts_alone() {',
    '        assert_eq!(total(50), 50);',
    '    }',
  ];
  const lib = (threshold: string) =>
    [
      '//! Orders from THRESHOLD up get RATE_PERCENT off.',
      '',
      'pub const RATE_PERCENT: u32 = 10;',
      `pub const THRESHOLD: u32 = ${threshold};`,
      '',
      'pub fn discount(amount: u32) -> u32 {',
      '    if amount >= THRESHOLD {',
      '        amount * RATE_PERCENT / 100',
      '    } else {',
      '        0',
      '    }',
      '}',
      '',
      'pub fn total(amount: u32) -> u32 {',
      '    amount - discount(amount)',
      '}',
      '',
      '#[cfg(test)]',
      'mod tests {',
      '    use super::*;',
      '',
      ...unitTests,
      '}',
      '',
    ].join('\n');
  const files: Record<string, string> = {
    'README.md': '# shop\n',
    'Cargo.toml': '[package]\nname = "shop"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    'src/lib.rs': lib('1000'),
  };
  if (style === 'data') {
    files['tests/golden.rs'] = [
      '#[test]',
      'fn matches_the_golden_total() {',
      '    let want: u32 = include_str!("data/total_200.txt").trim().parse().unwrap();',
      '    assert_eq!(shop::total(200), want);',
      '}',
      '',
    ].join('\n');
    files['tests/data/total_200.txt'] = '180\n';
  }
  return {
    runner: 'cargo',
    files,
    source: 'src/lib.rs',
    fixed: lib('100'),
    tests: style === 'literal' ? 'src/lib.rs' : 'tests/golden.rs',
    acTests: [style === 'literal' ? 'takes_ten_percent_off_from_100_up' : 'matches_the_golden_total'],
    ...(style === 'data' ? { data: { file: 'tests/data/total_200.txt', cheat: '200\n' } } : {}),
  };
}

// ---------------------------------------------------------------- mocha --------------------------------

/** The CommonJS shop with mocha's describe/it and node:assert; mocha names passed tests by title only. */
function mochaProject(): EvidenceProject {
  const jest = gamingProject('jest');
  const tests = [
    "const assert = require('node:assert/strict');",
    "const { discount, total } = require('../src/price');",
    '',
    "describe('total', () => {",
    "  it('takes 10% off from 100 up', () => {",
    '    assert.equal(total(200), 180);',
    '  });',
    "  it('takes 10% off at exactly 100', () => {",
    '    assert.equal(total(100), 90);',
    '  });',
    "  it('leaves small amounts alone', () => {",
    '    assert.equal(total(50), 50);',
    '  });',
    '});',
    '',
    "it('discount is zero below 100', () => {",
    '  assert.equal(discount(50), 0);',
    '});',
    '',
  ].join('\n');
  const pkg = { name: 'shop-mocha', version: '1.0.0', private: true, scripts: { test: 'mocha' } };
  return {
    runner: 'mocha',
    files: {
      'README.md': '# shop\n',
      'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
      'src/price.js': jest.files[jest.source]!,
      'test/price.test.js': tests,
    },
    source: 'src/price.js',
    fixed: jest.fixed,
    tests: 'test/price.test.js',
    acTests: [...jest.acTests],
  };
}

// ---------------------------------------------------------------- jest, ts-jest and a path alias -------

/**
 * TypeScript tests importing the code as `@/price` (tsconfig `paths`, jest `moduleNameMapper`), run by
 * jest through the ts-jest preset with its type check. Jest resolves the preset from the project, so
 * set-up links the shared packages in as its node_modules, the way an install would put them there.
 */
function tsJestProject(): EvidenceProject {
  const { nodeModules } = runnerPackages();
  const price = (threshold: string) =>
    [
      'export const RATE_PERCENT = 10;',
      `export const THRESHOLD = ${threshold};`,
      '',
      'export function discount(amount: number): number {',
      '  return amount >= THRESHOLD ? (amount * RATE_PERCENT) / 100 : 0;',
      '}',
      '',
      'export function total(amount: number): number {',
      '  return amount - discount(amount);',
      '}',
      '',
    ].join('\n');
  const tests = [
    "import { discount, total } from '@/price';",
    '',
    "describe('total', () => {",
    "  test('takes 10% off from 100 up', () => {",
    '    expect(total(200)).toBe(180);',
    '  });',
    "  test('takes 10% off at exactly 100', () => {",
    '    expect(total(100)).toBe(90);',
    '  });',
    "  test('leaves small amounts alone', () => {",
    '    expect(total(50)).toBe(50);',
    '  });',
    '});',
    '',
    "test('discount is zero below 100', () => {",
    '  expect(discount(50)).toBe(0);',
    '});',
    '',
  ].join('\n');
  const pkg = {
    name: 'shop-ts-jest',
    version: '1.0.0',
    private: true,
    scripts: { test: 'jest' },
    jest: {
      // The shared packages by path: set-up may not link outside the workspace, and npm would fetch them.
      transform: { '^.+\\.ts$': path.join(nodeModules, 'ts-jest') },
      // Specs where no path glob of the service looks: only the runner's collection says they are tests.
      testMatch: ['<rootDir>/spec/**/*.ts'],
      testEnvironment: 'node',
      moduleNameMapper: { '^@/(.*)$': '<rootDir>/src/$1' },
    },
  };
  const tsconfig = {
    compilerOptions: {
      strict: true,
      target: 'es2022',
      module: 'commonjs',
      esModuleInterop: true,
      baseUrl: '.',
      paths: { '@/*': ['src/*'] },
      typeRoots: [path.join(nodeModules, '@types')],
      types: ['jest'],
    },
    include: ['src', 'spec'],
  };
  return {
    runner: 'ts-jest',
    files: {
      'README.md': '# shop\n',
      '.gitignore': 'node_modules\n',
      'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
      'tsconfig.json': `${JSON.stringify(tsconfig, null, 2)}\n`,
      'src/price.ts': price('1000'),
      'spec/price.ts': tests,
    },
    source: 'src/price.ts',
    fixed: price('100'),
    tests: 'spec/price.ts',
    acTests: ['takes 10% off from 100 up', 'takes 10% off at exactly 100'],
  };
}

// ---------------------------------------------------------------- Maven, JUnit 4 -----------------------

/**
 * The shop in Java: JUnit 4 tests under src/test/java, one of them expecting an exception, run by
 * surefire; set-up resolves JUnit and the plugins from Maven Central into the loop's cache.
 */
function mavenProject(): EvidenceProject {
  const pom = mavenPom('shop', [{ groupId: 'junit', artifactId: 'junit', version: '4.13.2', scope: 'test' }]);
  const price = (threshold: string) =>
    [
      'package shop;',
      '',
      '/** Orders from THRESHOLD up get RATE_PERCENT off. */',
      'public final class Price {',
      '  public static final int RATE_PERCENT = 10;',
      `  public static final int THRESHOLD = ${threshold};`,
      '',
      '  private Price() {}',
      '',
      '  public static int discount(int amount) {',
      '    return amount >= THRESHOLD ? amount * RATE_PERCENT / 100 : 0;',
      '  }',
      '',
      '  public static int total(int amount) {',
      '    if (amount < 0) {',
      '      throw new IllegalArgumentException("a negative amount: " + amount);',
      '    }',
      '    return amount - discount(amount);',
      '  }',
      '}',
      '',
    ].join('\n');
  const tests = [
    'package shop;',
    '',
    'import static org.junit.Assert.assertEquals;',
    '',
    'import org.junit.Test;',
    '',
    'public class PriceTest {',
    '  @Test',
    '  public void takesTenPercentOffFrom100Up() {',
    '    assertEquals(180, Price.total(200));',
    '  }',
    '',
    '  @Test',
    '  public void takesTenPercentOffAtExactly100() {',
    '    assertEquals(90, Price.total(100));',
    '  }',
    '',
    '  @Test',
    '  public void leavesSmallAmountsAlone() {',
    '    assertEquals(50, Price.total(50));',
    '  }',
    '',
    '  @Test(expected = IllegalArgumentException.class)',
    '  public void rejectsNegativeAmounts() {',
    '    Price.total(-1);',
    '  }',
    '}',
    '',
  ].join('\n');
  return {
    runner: 'maven',
    files: {
      'README.md': '# shop\n',
      'pom.xml': pom,
      // Maven's own JVM with the C1 compiler only, as a project may ask: a build this small ends before C2
      // pays off (three mvn runs of this shop: 7.4 s -> 4.0 s of CPU), and the matrix runs four Maven loops
      // at once, each running mvn some seven times.
      '.mvn/jvm.config': '-XX:TieredStopAtLevel=1\n',
      'src/main/java/shop/Price.java': price('1000'),
      'src/test/java/shop/PriceTest.java': tests,
    },
    source: 'src/main/java/shop/Price.java',
    fixed: price('100'),
    tests: 'src/test/java/shop/PriceTest.java',
    acTests: ['PriceTest#takesTenPercentOffFrom100Up', 'PriceTest#takesTenPercentOffAtExactly100'],
  };
}

// ---------------------------------------------------------------- Gradle, JUnit 4 ----------------------

/** The Maven shop built by Gradle (Debian's 4.4.1), its tests named as Gradle's --tests names them. */
function gradleProject(): EvidenceProject {
  const { 'pom.xml': _pom, '.mvn/jvm.config': _jvm, ...files } = mavenProject().files;
  const build =
    "apply plugin: 'java'\n\nrepositories { mavenCentral() }\n\ndependencies {\n  testImplementation 'junit:junit:4.13.2'\n}\n";
  return {
    ...mavenProject(),
    runner: 'gradle',
    files: { ...files, 'build.gradle': build },
    acTests: ['PriceTest.takesTenPercentOffFrom100Up', 'PriceTest.takesTenPercentOffAtExactly100'],
  };
}
