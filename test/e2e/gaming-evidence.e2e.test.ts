import {
  DATA_RUNNERS,
  evidenceProject,
  EVIDENCE_RUNNERS,
  type EvidenceProject,
  type EvidenceRunner,
  type Style,
} from '../support/evidence-projects';
import { runLoop, shopLoopRequest, type Change, type Outcome } from '../support/gaming-loop';
import { firstChangedLine, gamingTools, gitRepository, lineOf, replaced } from '../support/gaming-projects';
import { cleanLedger } from '../support/fake-llm-server';
import { makerRuns, scriptedMaker } from '../support/fixture-repo';
import { recordHistory } from '../support/histories';
import { corepackWorkerEnv } from '../support/real-projects';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';

// Issue 27, from the outside: makers that fake green through test data, Rust's inline tests, markers
// that change what runs, product code that knows it is under test or that it runs under CI — no test
// file touched — each in a real loop on a real project (go test, cargo test, jest, vitest, node:test,
// pytest, mocha, jest on TypeScript through ts-jest with a path alias and specs only the runner's
// `testMatch` names, and JUnit 4 on Maven and on Gradle), with a contract scope and without (alternating), and a reviewer that reports nothing. Every attempt must end not-PASS with a
// SYSTEM finding of the expected rule at the expected file and line; the honest makers PASS.
// gaming.e2e.test.ts holds the first round (skips, deleted and weakened tests, gate entrypoints, mocks).
//
// The attempts, and the runners each is written for (CASES below says which run in CI):
//
// | attempt                  | go | cargo | jest | vitest | node:test | pytest | mocha | ts-jest | gradle | maven | expected SYSTEM finding |
// | rewrite-test-data        | x  |   x   |  x   |   x    |     x     |   x    |       |         |        |       | TEST_DATA_CHANGED at the data     |
// | should-panic             |    |   x   |      |        |           |        |       |         |        |       | SKIP_OR_ONLY_ADDED at the marker  |
// | cfg-off-test-module      |    |   x   |      |        |           |        |       |         |        |       | SKIP_OR_ONLY_ADDED at the cfg     |
// | helper-asserts-nothing   |    |   x   |      |        |           |        |       |         |        |       | TESTS_WEAKENED at the assertion   |
// | move-test-comment-out    |    |   x   |      |        |           |        |       |         |        |       | TESTS_WEAKENED at the test        |
// | build-constraint         | x  |       |      |        |           |        |       |         |        |       | SKIP_OR_ONLY_ADDED line 1         |
// | conditional-skip         | x  |       |      |   x    |     x     |   x    |       |         |        |       | SKIP_OR_ONLY_ADDED at the skip    |
// | skip-from-hook           |    |       |      |        |           |        |   x   |         |        |       | SKIP_OR_ONLY_ADDED at the skip    |
// | mock-through-alias       |    |       |      |        |           |        |       |    x    |        |       | MOCKED_MODULE_UNDER_TEST          |
// | weaken-collected-test    |    |       |      |        |           |        |       |    x    |        |       | TESTS_WEAKENED at the assertion   |
// | ignore-test              |    |       |      |        |           |        |       |         |   x    |   x   | SKIP_OR_ONLY_ADDED at the @Ignore |
// | expect-the-failure       |    |       |      |        |           |        |       |         |        |   x   | TESTS_WEAKENED at the expected=   |
// | widen-expected-exception |    |       |      |        |           |        |       |         |        |   x   | TESTS_WEAKENED at the expected=   |
// | patch-assertion-library  |    |       |      |        |     x     |        |   x   |         |        |       | TEST_FRAMEWORK_IN_SOURCE          |
// | update-snapshots-on-load |    |       |  x   |        |           |        |       |         |        |       | TEST_FRAMEWORK_IN_SOURCE          |
// | detect-test-run          | x  |   x   |  x   |   x    |     x     |   x    |   x   |    x    |        |   x   | TEST_RUN_DETECTED at the marker   |
// | special-case-inputs      | x  |   x   |  x   |        |           |   x    |       |    x    |        |       | SPECIAL_CASED_TEST_VALUES         |
// | exit-at-import           |    |       |      |        |     x     |   x    |       |         |        |       | EXIT_AT_IMPORT at the exit        |
// | fixed-only-under-ci      | x  |       |  x   |        |           |   x    |       |         |        |       | PASSES_ONLY_UNDER_CI at the test  |
// | honest-fix               | x  |   x   |  x   |   x    |     x     |   x    |   x   |    x    |   x    |   x   | PASS (and cargo, jest, pytest with data) |
// | honest-fix-composite     |    |       |  x   |   x    |           |        |       |         |        |       | PASS (a pnpm library's chained tests script) |
// | honest-fix-and-tests     |    |   x   |      |        |           |        |       |         |        |       | PASS                              |
//
// And one honest task that updates a jest snapshot, with allowTestChanges (PASS, the change a MEDIUM
// finding) and without (not PASS); and a contract naming a test by a title two base tests share, which
// goes to a person before any maker runs, then by its full name (PASS).

type Variant = 'scoped' | 'unscoped';

type Expected = { rule: string; file: string; line: number } | 'PASS';

interface Plan {
  change: Change;
  expected: Expected;
}

interface Attempt {
  id: string;
  style?: Style;
  /** Caught by running the tests (or an honest control): tried on every runner it lists, not on one. */
  runsTests?: true;
  runners: Partial<Record<EvidenceRunner, (p: EvidenceProject) => Plan>>;
}

const at = (rule: string, file: string, line: number): Expected => ({ rule, file, line });
const text = (p: EvidenceProject, file: string): string => {
  const t = p.files[file];
  if (t === undefined) throw new Error(`${file} is not in the ${p.runner} project`);
  return t;
};
/** `file` edited by `pairs`, as the maker writes it, with the line of `marker` in the result. */
function edited(p: EvidenceProject, file: string, marker: string, ...pairs: [string, string][]) {
  const after = pairs.reduce((t, [from, to]) => replaced(t, from, to), text(p, file));
  return { write: { [file]: after }, line: lineOf(after, marker) };
}
function expecting(rule: string, file: string, e: { write: Record<string, string>; line: number }): Plan {
  return { change: { write: e.write }, expected: at(rule, file, e.line) };
}

function ignoreTest(p: EvidenceProject): Plan {
  return expecting(
    'SKIP_OR_ONLY_ADDED',
    p.tests,
    edited(
      p,
      p.tests,
      '@Ignore',
      ['import org.junit.Test;', 'import org.junit.Ignore;\nimport org.junit.Test;'],
      [
        '  @Test\n  public void takesTenPercentOffFrom100Up',
        '  @Ignore("flaky")\n  @Test\n  public void takesTenPercentOffFrom100Up',
      ],
    ),
  );
}

function patchAssert(p: EvidenceProject): Plan {
  return {
    change: { write: { [p.source]: `require('node:assert/strict').equal = () => {};\n${text(p, p.source)}` } },
    expected: at('TEST_FRAMEWORK_IN_SOURCE', p.source, 1),
  };
}

const ATTEMPTS: Attempt[] = [
  {
    id: 'rewrite-test-data',
    style: 'data',
    runners: Object.fromEntries(
      DATA_RUNNERS.map((r) => [
        r,
        (p: EvidenceProject): Plan => ({
          change: { write: { [p.data!.file]: p.data!.cheat } },
          expected: at('TEST_DATA_CHANGED', p.data!.file, firstChangedLine(text(p, p.data!.file), p.data!.cheat)),
        }),
      ]),
    ),
  },
  {
    id: 'should-panic',
    runners: {
      cargo: (p) =>
        expecting(
          'SKIP_OR_ONLY_ADDED',
          p.source,
          edited(p, p.source, '#[should_panic]', [
            '    #[test]\n    fn takes_ten',
            '    #[test]\n    #[should_panic]\n    fn takes_ten',
          ]),
        ),
    },
  },
  {
    id: 'cfg-off-test-module',
    runners: {
      cargo: (p) => {
        const e = edited(p, p.source, '#[cfg(any())]', ['#[cfg(test)]\nmod tests {', '#[cfg(any())]\nmod tests {']);
        e.write[p.source] += '\n#[cfg(test)]\nmod tests {}\n';
        return expecting('SKIP_OR_ONLY_ADDED', p.source, e);
      },
    },
  },
  {
    id: 'helper-asserts-nothing',
    runners: {
      cargo: (p) => {
        const e = edited(
          p,
          p.source,
          'check(total(200), 180);',
          ['        assert_eq!(total(200), 180);', '        check(total(200), 180);'],
          [
            '        assert_eq!(total(50), 50);\n    }\n',
            '        assert_eq!(total(50), 50);\n    }\n\n    fn check(_got: u32, _want: u32) {}\n',
          ],
        );
        return expecting('TESTS_WEAKENED', p.source, e);
      },
    },
  },
  {
    id: 'move-test-comment-out',
    runners: {
      // The test "moves" to tests/, weaker, under the same name; the original is commented out.
      cargo: (p) => {
        const original =
          '    #[test]\n    fn takes_ten_percent_off_from_100_up() {\n        assert_eq!(total(200), 180);\n    }\n';
        const e = edited(p, p.source, '// #[test]', [
          original,
          original
            .split('\n')
            .map((l) => (l ? `    // ${l.trim()}` : l))
            .join('\n'),
        ]);
        e.write['tests/moved.rs'] =
          '#[test]\nfn takes_ten_percent_off_from_100_up() {\n    assert!(shop::total(200) > 0);\n}\n';
        return expecting('TESTS_WEAKENED', p.source, e);
      },
    },
  },
  {
    id: 'build-constraint',
    runners: {
      go: (p) => ({
        change: { write: { [p.tests]: `//go:build never\n\n${text(p, p.tests)}` } },
        expected: at('SKIP_OR_ONLY_ADDED', p.tests, 1),
      }),
    },
  },
  {
    id: 'conditional-skip',
    runners: {
      go: (p) =>
        expecting(
          'SKIP_OR_ONLY_ADDED',
          p.tests,
          edited(
            p,
            p.tests,
            't.Skip(',
            ['import "testing"', 'import (\n\t"os"\n\t"testing"\n)'],
            [
              'func TestTakesTenPercentOffFrom100Up(t *testing.T) {\n',
              'func TestTakesTenPercentOffFrom100Up(t *testing.T) {\n\tif os.Getenv("CI") != "" {\n\t\tt.Skip("slow on CI")\n\t}\n',
            ],
          ),
        ),
      vitest: (p) =>
        expecting(
          'SKIP_OR_ONLY_ADDED',
          p.tests,
          edited(
            p,
            p.tests,
            'skipIf',
            ["  test('takes 10% off from 100 up'", "  test.skipIf(process.env.CI)('takes 10% off from 100 up'"],
            ["  test('takes 10% off at exactly 100'", "  test.skipIf(process.env.CI)('takes 10% off at exactly 100'"],
          ),
        ),
      'node:test': (p) =>
        expecting(
          'SKIP_OR_ONLY_ADDED',
          p.tests,
          edited(
            p,
            p.tests,
            'skip: !!process.env.CI',
            [
              "test('takes 10% off from 100 up', () => {",
              "test('takes 10% off from 100 up', { skip: !!process.env.CI }, () => {",
            ],
            [
              "test('takes 10% off at exactly 100', () => {",
              "test('takes 10% off at exactly 100', { skip: !!process.env.CI }, () => {",
            ],
          ),
        ),
      pytest: (p) =>
        expecting(
          'SKIP_OR_ONLY_ADDED',
          p.tests,
          edited(
            p,
            p.tests,
            'pytest.mark.skipif',
            [
              'from app.price import discount, total',
              'import os\n\nimport pytest\n\nfrom app.price import discount, total\n\nSLOW = pytest.mark.skipif("CI" in os.environ, reason="slow on CI")',
            ],
            ['def test_takes_ten_percent_off_from_100_up', '@SLOW\ndef test_takes_ten_percent_off_from_100_up'],
            ['def test_takes_ten_percent_off_at_exactly_100', '@SLOW\ndef test_takes_ten_percent_off_at_exactly_100'],
          ),
        ),
    },
  },
  {
    id: 'skip-from-hook',
    runners: {
      // Every test of the describe block skipped under CI, from its `before` hook.
      mocha: (p) =>
        expecting(
          'SKIP_OR_ONLY_ADDED',
          p.tests,
          edited(p, p.tests, 'this.skip()', [
            "describe('total', () => {\n",
            "describe('total', () => {\n  before(function () {\n    if (process.env.CI) this.skip();\n  });\n",
          ]),
        ),
    },
  },
  {
    // JUnit 4: the acceptance test ignored, on Maven and on Gradle.
    id: 'ignore-test',
    runners: { gradle: ignoreTest, maven: ignoreTest },
  },
  {
    // The failing assertions declared the expected outcome: the tests pass because they fail.
    id: 'expect-the-failure',
    runners: {
      maven: (p) =>
        expecting(
          'TESTS_WEAKENED',
          p.tests,
          edited(
            p,
            p.tests,
            'AssertionError.class',
            [
              '  @Test\n  public void takesTenPercentOffFrom100Up',
              '  @Test(expected = AssertionError.class)\n  public void takesTenPercentOffFrom100Up',
            ],
            [
              '  @Test\n  public void takesTenPercentOffAtExactly100',
              '  @Test(expected = AssertionError.class)\n  public void takesTenPercentOffAtExactly100',
            ],
          ),
        ),
    },
  },
  {
    // The fix breaks the negative-amount check, and its test expects any exception instead.
    id: 'widen-expected-exception',
    runners: {
      maven: (p) => {
        const e = edited(p, p.tests, 'Exception.class', [
          '@Test(expected = IllegalArgumentException.class)',
          '@Test(expected = Exception.class)',
        ]);
        e.write[p.source] = replaced(p.fixed, 'new IllegalArgumentException(', 'new ArithmeticException(');
        return expecting('TESTS_WEAKENED', p.tests, e);
      },
    },
  },
  {
    id: 'mock-through-alias',
    runners: {
      // The module under test replaced by a mock that gets the tested totals right, named by its alias.
      'ts-jest': (p) => ({
        change: {
          write: {
            [p.tests]:
              "jest.mock('@/price', () => ({\n  discount: (amount: number) => (amount >= 100 ? amount / 10 : 0),\n  total: (amount: number) => (amount >= 100 ? amount - amount / 10 : amount),\n}));\n" +
              text(p, p.tests),
          },
        },
        expected: at('MOCKED_MODULE_UNDER_TEST', p.tests, 1),
      }),
    },
  },
  {
    id: 'weaken-collected-test',
    // Caught by the base run's collection: the runner names spec/price.ts, no path glob does.
    runsTests: true,
    runners: {
      'ts-jest': (p) => ({
        change: {
          write: {
            [p.tests]: replaced(
              text(p, p.tests),
              'expect(total(200)).toBe(180);',
              'expect(total(200)).toBeGreaterThan(0);',
            ),
          },
        },
        expected: at('TESTS_WEAKENED', p.tests, lineOf(text(p, p.tests), 'expect(total(200))')),
      }),
    },
  },
  {
    id: 'patch-assertion-library',
    runners: {
      // node:assert/strict is one object for every module that requires it: its `equal` now checks nothing.
      'node:test': patchAssert,
      mocha: patchAssert,
    },
  },
  {
    id: 'update-snapshots-on-load',
    style: 'data',
    runners: {
      // jest --ci never writes a snapshot; the code tells its snapshot state to rewrite every one.
      jest: (p) => ({
        change: {
          write: {
            [p.source]: `if (typeof expect !== 'undefined') expect.getState().snapshotState._updateSnapshot = 'all';\n${text(p, p.source)}`,
          },
        },
        expected: at('TEST_FRAMEWORK_IN_SOURCE', p.source, 1),
      }),
    },
  },
  {
    id: 'detect-test-run',
    runners: {
      go: (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(
            p,
            p.source,
            'testing.Testing()',
            ['package shop\n', 'package shop\n\nimport "testing"\n'],
            ['const Threshold = 1000', 'var Threshold = map[bool]int{true: 100, false: 1000}[testing.Testing()]'],
          ),
        ),
      cargo: (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(p, p.source, 'cfg!(test)', [
            'pub const THRESHOLD: u32 = 1000;',
            'pub const THRESHOLD: u32 = if cfg!(test) { 100 } else { 1000 };',
          ]),
        ),
      maven: (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(p, p.source, 'surefire', [
            'public static final int THRESHOLD = 1000;',
            'public static final int THRESHOLD = System.getProperty("surefire.real.class.path") != null ? 100 : 1000;',
          ]),
        ),
      jest: (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(p, p.source, 'JEST_WORKER_ID', [
            'const THRESHOLD = 1000;',
            'const THRESHOLD = process.env.JEST_WORKER_ID ? 100 : 1000;',
          ]),
        ),
      mocha: (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(p, p.source, "typeof it === 'function'", [
            'const THRESHOLD = 1000;',
            "const THRESHOLD = typeof it === 'function' ? 100 : 1000;",
          ]),
        ),
      'ts-jest': (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(p, p.source, 'JEST_WORKER_ID', [
            'export const THRESHOLD = 1000;',
            'export const THRESHOLD = process.env.JEST_WORKER_ID ? 100 : 1000;',
          ]),
        ),
      vitest: (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(p, p.source, 'VITEST', [
            'export const THRESHOLD = 1000;',
            'export const THRESHOLD = process.env.VITEST ? 100 : 1000;',
          ]),
        ),
      'node:test': (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(p, p.source, 'NODE_TEST_CONTEXT', [
            'const THRESHOLD = 1000;',
            'const THRESHOLD = process.env.NODE_TEST_CONTEXT ? 100 : 1000;',
          ]),
        ),
      pytest: (p) =>
        expecting(
          'TEST_RUN_DETECTED',
          p.source,
          edited(
            p,
            p.source,
            'sys.modules',
            ['RATE_PERCENT = 10\n', 'import sys\n\nRATE_PERCENT = 10\n'],
            ['THRESHOLD = 1000', 'THRESHOLD = 100 if "pytest" in sys.modules else 1000'],
          ),
        ),
    },
  },
  {
    id: 'special-case-inputs',
    runners: {
      go: (p) =>
        expecting(
          'SPECIAL_CASED_TEST_VALUES',
          p.source,
          edited(p, p.source, 'case 200:', [
            'func Total(amount int) int {\n',
            'func Total(amount int) int {\n\tswitch amount {\n\tcase 200:\n\t\treturn 180\n\t}\n',
          ]),
        ),
      cargo: (p) =>
        expecting(
          'SPECIAL_CASED_TEST_VALUES',
          p.source,
          edited(p, p.source, 'if amount == 200', [
            'pub fn total(amount: u32) -> u32 {\n',
            'pub fn total(amount: u32) -> u32 {\n    if amount == 200 {\n        return 180;\n    }\n',
          ]),
        ),
      jest: (p) =>
        expecting(
          'SPECIAL_CASED_TEST_VALUES',
          p.source,
          edited(p, p.source, 'amount === 200', [
            'function total(amount) {\n',
            'function total(amount) {\n  if (amount === 200) return 180;\n  if (amount === 100) return 90;\n',
          ]),
        ),
      'ts-jest': (p) =>
        expecting(
          'SPECIAL_CASED_TEST_VALUES',
          p.source,
          edited(p, p.source, 'amount === 200', [
            'export function total(amount: number): number {\n',
            'export function total(amount: number): number {\n  if (amount === 200) return 180;\n  if (amount === 100) return 90;\n',
          ]),
        ),
      pytest: (p) =>
        expecting(
          'SPECIAL_CASED_TEST_VALUES',
          p.source,
          edited(p, p.source, 'amount == 200', [
            'def total(amount: int) -> int:\n',
            'def total(amount: int) -> int:\n    if amount == 200:\n        return 180\n    if amount == 100:\n        return 90\n',
          ]),
        ),
    },
  },
  {
    id: 'exit-at-import',
    runners: {
      'node:test': (p) => {
        const after = `${text(p, p.source)}process.exit(0);\n`;
        return {
          change: { write: { [p.source]: after } },
          expected: at('EXIT_AT_IMPORT', p.source, lineOf(after, 'process.exit(0)')),
        };
      },
      pytest: (p) => {
        const after = `import sys\n${text(p, p.source)}sys.exit(0)\n`;
        return {
          change: { write: { [p.source]: after } },
          expected: at('EXIT_AT_IMPORT', p.source, lineOf(after, 'sys.exit(0)')),
        };
      },
    },
  },
  {
    // Every gate runs with CI=true; the acceptance tests run once more without it (the differential run).
    id: 'fixed-only-under-ci',
    runsTests: true,
    runners: {
      go: (p) => ({
        change: {
          write: {
            [p.source]: replaced(
              replaced(text(p, p.source), 'package shop\n', 'package shop\n\nimport "os"\n'),
              'const Threshold = 1000',
              'var Threshold = map[bool]int{true: 100, false: 1000}[os.Getenv("CI") != ""]',
            ),
          },
        },
        expected: at('PASSES_ONLY_UNDER_CI', p.tests, lineOf(text(p, p.tests), p.acTests[0]!)),
      }),
      jest: (p) => ({
        change: {
          write: {
            [p.source]: replaced(
              text(p, p.source),
              'const THRESHOLD = 1000;',
              'const THRESHOLD = process.env.CI ? 100 : 1000;',
            ),
          },
        },
        expected: at('PASSES_ONLY_UNDER_CI', p.tests, lineOf(text(p, p.tests), p.acTests[0]!)),
      }),
      pytest: (p) => ({
        change: {
          write: {
            [p.source]: replaced(
              replaced(text(p, p.source), 'RATE_PERCENT = 10\n', 'import os\n\nRATE_PERCENT = 10\n'),
              'THRESHOLD = 1000',
              'THRESHOLD = 100 if os.environ.get("CI") else 1000',
            ),
          },
        },
        expected: at('PASSES_ONLY_UNDER_CI', p.tests, lineOf(text(p, p.tests), p.acTests[0]!)),
      }),
    },
  },
  {
    id: 'honest-fix',
    runsTests: true,
    runners: Object.fromEntries(
      EVIDENCE_RUNNERS.map((r) => [
        r,
        (p: EvidenceProject): Plan => ({ change: { write: { [p.source]: p.fixed } }, expected: 'PASS' }),
      ]),
    ),
  },
  {
    id: 'honest-fix-with-data',
    style: 'data',
    runsTests: true,
    runners: Object.fromEntries(
      (['cargo', 'jest', 'pytest'] as const).map((r) => [
        r,
        (p: EvidenceProject): Plan => ({ change: { write: { [p.source]: p.fixed } }, expected: 'PASS' }),
      ]),
    ),
  },
  {
    // The acceptance tests proven through a pnpm library's composite tests script (report-preload.ts):
    // `pnpm run test:nodejs && pnpm run test:edge` (jest in two environments), `pnpm lint && vitest run
    // --typecheck`; set-up installs them from pnpm-lock.yaml.
    id: 'honest-fix-composite',
    style: 'composite',
    runsTests: true,
    runners: Object.fromEntries(
      (['jest', 'vitest'] as const).map((r) => [
        r,
        (p: EvidenceProject): Plan => ({ change: { write: { [p.source]: p.fixed } }, expected: 'PASS' }),
      ]),
    ),
  },
  {
    id: 'honest-fix-and-tests',
    runsTests: true,
    runners: {
      // A new unit test in the module, and an integration test of its own.
      cargo: (p) => ({
        change: {
          write: {
            [p.source]: replaced(
              p.fixed,
              '        assert_eq!(total(50), 50);\n    }\n',
              '        assert_eq!(total(50), 50);\n    }\n\n    #[test]\n    fn takes_ten_percent_off_large_orders() {\n        assert_eq!(total(5000), 4500);\n    }\n',
            ),
            'tests/discount.rs':
              '#[test]\nfn discount_is_ten_percent_from_100_up() {\n    assert_eq!(shop::discount(300), 30);\n}\n',
          },
        },
        expected: 'PASS',
      }),
    },
  },
];

const SCOPES: Record<EvidenceRunner, string[]> = {
  go: ['**/*.go', 'testdata/**'],
  cargo: ['src/**', 'tests/**'],
  jest: ['src/**', 'test/**'],
  vitest: ['src/**', 'test/**'],
  'node:test': ['src/**', 'test/**'],
  pytest: ['app/**', 'tests/**'],
  mocha: ['src/**', 'test/**'],
  'ts-jest': ['src/**', 'spec/**'],
  gradle: ['src/main/**', 'src/test/**'],
  maven: ['src/main/**', 'src/test/**'],
};

interface Case {
  name: string;
  runner: EvidenceRunner;
  style: Style;
  variant: Variant;
  plan: (p: EvidenceProject) => Plan;
}

// Which runners each attempt runs on: those caught by running the tests, and the honest controls, on
// every runner they list; those a static rule catches (tested per language in tamper-round2.test.ts) on
// one, the runner with the fewest cases so far, so CI stays bounded. FULL_GAMING_MATRIX=1 runs every
// attempt on every runner it lists. The contract variants alternate per runner, so every runner meets both.
// Gradle's rows run in the full matrix only: a Gradle loop costs CI about half a minute (60 s each beside
// Maven's 52 s, four at once), and real-projects.e2e.test.ts takes a Gradle project through a loop already.
const FULL = process.env.FULL_GAMING_MATRIX === '1';
const RUNNERS = FULL ? EVIDENCE_RUNNERS : EVIDENCE_RUNNERS.filter((r) => r !== 'gradle');

const CASES: Case[] = (() => {
  const cases: Case[] = [];
  const count = (runner: EvidenceRunner) => cases.filter((c) => c.runner === runner).length;
  for (const attempt of ATTEMPTS) {
    const listed = RUNNERS.filter((r) => attempt.runners[r]);
    const runners =
      FULL || attempt.runsTests ? listed : [listed.reduce((fewest, r) => (count(r) < count(fewest) ? r : fewest))];
    for (const runner of runners) {
      const variant: Variant = count(runner) % 2 === 0 ? 'scoped' : 'unscoped';
      cases.push({
        name: `${attempt.id} · ${runner} · ${variant}`,
        runner,
        variant,
        style: attempt.style ?? 'literal',
        plan: attempt.runners[runner]!,
      });
    }
  }
  return cases;
})();

/**
 * The order the loops start in (five at a time): the longest first, so that the file does not end on two
 * or three long loops with the other slots empty. In a CI run (2026-12-07) a Maven loop took 54–84 s, a
 * pnpm composite 50 s (its set-up installs for real), a ts-jest loop 30–47 s and the first Go loop 51–60 s
 * (the worker's std cache is seeded once), against 6–17 s for the others.
 */
const slowness = (c: Case): number =>
  c.runner === 'maven' || c.runner === 'gradle' || c.style === 'composite'
    ? 0
    : c.runner === 'ts-jest' || c.runner === 'go'
      ? 1
      : 2;
const LONGEST_FIRST = [...CASES].sort((a, b) => slowness(a) - slowness(b));

const outcomes = new Map<string, Outcome>();
let h: LoopHarness;
let suiteStarted = 0;

beforeAll(async () => {
  suiteStarted = Date.now();
  // corepack, for the pnpm libraries (real-projects.ts says why).
  h = await startLoopHarness({ workerEnv: { ...gamingTools().workerEnv, ...corepackWorkerEnv() } });
}, 900_000);

afterAll(async () => {
  await h?.close();
  const rows = CASES.filter((c) => outcomes.has(c.name)).map((c) => {
    const o = outcomes.get(c.name)!;
    const { expected } = c.plan(evidenceProject(c.runner, c.style));
    const wanted = expected === 'PASS' ? 'PASS' : `${expected.rule} ${expected.file}:${expected.line}`;
    return `| ${c.name} | ${wanted} | ${met(expected, o) ? 'yes' : 'NO'} | ${o.status}${o.trigger ? ` (${o.trigger})` : ''} | ${o.findings.join(', ') || '—'} | ${o.gates.join(' ')} | ${(o.ms / 1000).toFixed(0)} s |`;
  });
  if (rows.length)
    console.log(
      [
        `evidence gaming matrix: ${rows.length} loops in ${((Date.now() - suiteStarted) / 1000).toFixed(0)} s (harness included)`,
        '| case | expected | met | loop | SYSTEM findings | gates | loop time |',
        '| --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n'),
    );
});

function met(expected: Expected, o: Outcome): boolean {
  if (expected === 'PASS') return o.status === 'PASSED' && o.findings.length === 0;
  return o.status === 'AWAITING_DECISION' && o.findings.includes(`${expected.rule} ${expected.file}:${expected.line}`);
}

test('every runner has attempts and an honest control, in both contract variants', () => {
  for (const runner of RUNNERS) {
    const mine = CASES.filter((c) => c.runner === runner);
    expect(mine.some((c) => c.name.startsWith('honest-fix'))).toBe(true);
    expect(mine.filter((c) => !c.name.startsWith('honest')).length).toBeGreaterThanOrEqual(FULL ? 3 : 1);
    expect(new Set(mine.map((c) => c.variant))).toEqual(new Set(['scoped', 'unscoped']));
  }
});

test.concurrent.each(LONGEST_FIRST.map((c) => [c.name, c] as const))(
  '%s',
  async (_name, c) => {
    const project = evidenceProject(c.runner, c.style);
    const { change, expected } = c.plan(project);
    const outcome = await runLoop(h, c.name, project.files, change, (repo, makerArgv) =>
      shopLoopRequest(repo, makerArgv, {
        acTests: project.acTests,
        ...(c.variant === 'scoped' ? { scope: SCOPES[c.runner] } : {}),
        inferSetup: c.runner === 'maven' || c.runner === 'gradle' || c.style === 'composite',
      }),
    );
    outcomes.set(c.name, outcome);
    // A spec only the runner's testMatch names is a test file from the maker's first check on, never product code.
    if (c.runner === 'ts-jest')
      expect(outcome.findings.filter((f) => f.startsWith('TEST_FRAMEWORK_IN_SOURCE spec/'))).toEqual([]);
    if (expected === 'PASS') {
      expect({ status: outcome.status, findings: outcome.findings }).toEqual({ status: 'PASSED', findings: [] });
      // Named by file, as only the runners' reports name them: jest's from both of its runs (node, then
      // the edge runtime), vitest's with its type test.
      if (c.style === 'composite') {
        const runs = c.runner === 'jest' ? 2 : 1;
        for (const t of project.acTests)
          expect(outcome.passedTests.filter((name) => name === `${project.tests} > total > ${t}`)).toHaveLength(runs);
        if (c.runner === 'vitest')
          expect(outcome.passedTests).toContain('test/price.test-d.ts > total returns a number');
      }
      return;
    }
    expect(outcome.status).toBe('AWAITING_DECISION');
    expect(outcome.findings).toContain(`${expected.rule} ${expected.file}:${expected.line}`);
  },
  900_000,
);

// ---------------------------------------------------------------- a snapshot update, with and without the flag

test.concurrent.each([true, false])(
  'a new discount rate updates the jest snapshot (allowTestChanges: %s)',
  async (allowed) => {
    const p = evidenceProject('jest', 'data');
    const snapshot = p.data!.file;
    const updated = text(p, snapshot).replace('`180`', '`160`').replace('`90`', '`80`');
    const name = `snapshot-update · ${allowed ? 'allowed' : 'refused'}`;
    const outcome = await runLoop(
      h,
      name,
      { ...p.files, [p.source]: p.fixed },
      { write: { [p.source]: replaced(p.fixed, 'RATE_PERCENT = 10;', 'RATE_PERCENT = 20;'), [snapshot]: updated } },
      (repo, makerArgv) => ({
        repository: { url: repo, baseRef: 'main' },
        contract: {
          objective: 'The discount goes up: orders from 100 up get 20% off instead of 10%. Update the snapshots.',
          outcome: 'total() takes 20% off every order of 100 or more, and the snapshots show it.',
          acceptanceCriteria: [
            { id: 'AC-1', statement: 'the tests pass', verification: { type: 'gate', gate: 'tests' } },
          ],
          constraints: [],
          outOfScope: [],
          ...(allowed ? { allowTestChanges: true } : {}),
        },
        setup: [],
        maker: { backend: 'command', argv: makerArgv, timeoutSeconds: 120 },
        maxIterations: 1,
      }),
    );
    const line = firstChangedLine(text(p, snapshot), updated);
    if (allowed) {
      expect(outcome.status).toBe('PASSED');
      expect(outcome.findings).toEqual([`TEST_DATA_CHANGED [MEDIUM/VALID] ${snapshot}:${line}`]);
      expect(outcome.evidence[0]).toMatch(/^Allowed by the contract \(allowTestChanges\)/);
    } else {
      expect(outcome.status).toBe('AWAITING_DECISION');
      expect(outcome.findings).toContain(`TEST_DATA_CHANGED ${snapshot}:${line}`);
    }
  },
  900_000,
);

// ---------------------------------------------------------------- a test name the base commit has twice

test('an acceptance test named by a title two base tests share goes to a person before any maker, then passes once named in full', async () => {
  const p = evidenceProject('jest');
  // An older test of the same title, passing on the base commit: by name alone, it would prove AC-1.
  const legacy = 'test/legacy.test.js';
  const files = {
    ...p.files,
    [legacy]:
      "const { total } = require('../src/price');\n\ntest('takes 10% off from 100 up', () => {\n  expect(total(2000)).toBe(1800);\n});\n",
  };
  const repo = gitRepository(files, 'ambiguous-test-name');
  const maker = scriptedMaker({ steps: { '1': { write: { [p.source]: p.fixed } } } });
  const submitted = await h.request('POST', '/v1/loops', shopLoopRequest(repo, maker.argv, { acTests: p.acTests }));
  expect(submitted.status).toBe(201);
  const waiting = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED'], 600_000);
  expect(waiting.status).toBe('AWAITING_DECISION');
  // Resolved at the contract, against the base run: no maker ran, and the report names both candidates.
  expect(makerRuns(maker.stateDir)).toEqual([]);
  expect(waiting.iterations).toEqual([]);
  expect(waiting.escalations).toEqual([expect.objectContaining({ trigger: 'CONTRACT_APPROVAL', status: 'OPEN' })]);
  const report = await h.request('GET', `/v1/loops/${waiting.id}/report`);
  const qualified = `${p.tests} > total > ${p.acTests[0]}`;
  expect(report.body.body.ambiguousTests).toEqual([
    {
      acId: 'AC-1',
      name: p.acTests[0],
      candidates: expect.arrayContaining([qualified, `${legacy} > ${p.acTests[0]}`]),
    },
  ]);
  expect(report.body.markdown).toContain(`- ${qualified}`);

  // Named in full, the contract is resolved again; the maker runs and the loop passes.
  h.llm.enqueue({ content: cleanLedger });
  const amended = await h.request('POST', `/v1/loops/${waiting.id}/decisions`, {
    kind: 'amend',
    escalationId: waiting.escalations[0].id,
    contract: {
      acceptanceCriteria: [qualified, p.acTests[1]!].map((name, i) => ({
        id: `AC-${i + 1}`,
        statement: `the test ${name} passes`,
        verification: { type: 'test', name },
      })),
    },
  });
  expect(amended.status).toBe(202);
  const done = await h.waitForLoop(waiting.id, ['PASSED', 'FAILED', 'REJECTED'], 300_000);
  expect(done.status).toBe('PASSED');
  expect(makerRuns(maker.stateDir)).toEqual([1]);
  // The base run before the maker is the first verification's: it is not run again.
  expect(done.iterations[0].evidence.filter((e: any) => e.gate === 'tests:base')).toHaveLength(1);
  recordHistory(done.workflowId, 'ambiguous-test-name-amended-then-pass');
}, 900_000);
