import { lines, located, removeTamperRepos, tamper } from '../support/tamper-repo';

// Issue 27's rules against real git repositories, each with cases that must fire and near misses that
// must not: test data, Rust's inline tests and run-changing markers, and product code that knows it is
// under test (the gaming matrices run them in real loops: gaming-evidence.e2e.test.ts).

afterAll(removeTamperRepos);

const RUST_LIB = lines(
  'pub fn total(amount: u32) -> u32 {',
  '    if amount >= 1000 { amount - amount / 10 } else { amount }',
  '}',
  '',
  '#[cfg(test)]',
  'mod tests {',
  '    use super::*;',
  '',
  '    #[test]',
  '    fn takes_ten_percent_off_from_100_up() {',
  '        assert_eq!(total(200), 180);',
  '    }',
  '}',
);

describe('TEST_DATA_CHANGED', () => {
  it('fires on a golden file, a jest snapshot and a fixture, at the first changed line', async () => {
    const findings = await tamper(
      {
        'testdata/total.golden': lines('total 200', '= 180'),
        'test/__snapshots__/price.test.js.snap': lines('exports[`total 1`] = `180`;'),
        'tests/fixtures/orders.json': lines('{', '  "expected": 180', '}'),
      },
      {
        write: {
          'testdata/total.golden': lines('total 200', '= 200'),
          'test/__snapshots__/price.test.js.snap': lines('exports[`total 1`] = `200`;'),
          'tests/fixtures/orders.json': lines('{', '  "expected": 200', '}'),
        },
      },
    );
    expect(located(findings)).toEqual([
      ['TEST_DATA_CHANGED', 'test/__snapshots__/price.test.js.snap', 1],
      ['TEST_DATA_CHANGED', 'testdata/total.golden', 2],
      ['TEST_DATA_CHANGED', 'tests/fixtures/orders.json', 2],
    ]);
    expect(findings.find((f) => f.location.file === 'testdata/total.golden')!.evidence).toContain('+2: = 200');
  });

  it('leaves a snapshot file alone when it only gains entries (new tests), not when one changes', async () => {
    const base = lines('// Jest Snapshot v1', '', 'exports[`total 1`] = `180`;');
    const findings = await tamper(
      { 'test/__snapshots__/a.test.js.snap': base, 'test/__snapshots__/b.test.js.snap': base },
      {
        write: {
          'test/__snapshots__/a.test.js.snap': `${base}\nexports[\`total 2\`] = \`90\`;\n`,
          'test/__snapshots__/b.test.js.snap': base.replace('180', '200'),
        },
      },
    );
    expect(located(findings)).toEqual([['TEST_DATA_CHANGED', 'test/__snapshots__/b.test.js.snap', 3]]);
  });

  it('fires on deleted test data; new data files and data outside test directories are fine', async () => {
    const findings = await tamper(
      { 'testdata/a.json': '{}\n', 'docs/example.json': '{}\n' },
      { remove: ['testdata/a.json'], write: { 'testdata/new.json': '[]\n', 'docs/example.json': '[]\n' } },
    );
    expect(located(findings)).toEqual([['TEST_DATA_CHANGED', 'testdata/a.json', 1]]);
  });
});

describe('inline tests and markers that change what runs', () => {
  it('treats a Rust module with #[cfg(test)] in src/ as a test file: #[should_panic], #[cfg(any())], fewer asserts', async () => {
    const disabled = RUST_LIB.replace('#[cfg(test)]\nmod tests {', '#[cfg(any())]\nmod tests {').concat(
      '\n#[cfg(test)]\nmod tests {}\n',
    );
    const panicking = RUST_LIB.replace('    #[test]\n', '    #[test]\n    #[should_panic]\n');
    const noAssert = RUST_LIB.replace('        assert_eq!(total(200), 180);\n', '        let _ = total(200);\n');
    const findings = await tamper(
      { 'a/src/lib.rs': RUST_LIB, 'b/src/lib.rs': RUST_LIB, 'c/src/lib.rs': RUST_LIB },
      { write: { 'a/src/lib.rs': disabled, 'b/src/lib.rs': panicking, 'c/src/lib.rs': noAssert } },
    );
    expect(located(findings)).toEqual(
      expect.arrayContaining([
        ['SKIP_OR_ONLY_ADDED', 'a/src/lib.rs', 5],
        ['SKIP_OR_ONLY_ADDED', 'b/src/lib.rs', 10],
        ['TESTS_WEAKENED', 'c/src/lib.rs', 11],
      ]),
    );
  });

  it('fires on a Go build constraint added to a test file, and on conditional skips in JS and Python', async () => {
    const findings = await tamper(
      {
        'price_test.go': lines('package price', '', 'import "testing"', '', 'func TestTotal(t *testing.T) {}'),
        'test/a.test.js': lines("test('a', () => {});"),
        'tests/test_a.py': lines('def test_a():', '    assert True'),
      },
      {
        write: {
          'price_test.go': lines(
            '//go:build never',
            '',
            'package price',
            '',
            'import "testing"',
            '',
            'func TestTotal(t *testing.T) {}',
          ),
          'test/a.test.js': lines("test('a', { skip: !process.env.FULL }, () => {});"),
          'tests/test_a.py': lines(
            'import pytest',
            'np = pytest.importorskip("numpy")',
            'def test_a():',
            '    assert True',
          ),
        },
      },
    );
    expect(located(findings)).toEqual([
      ['SKIP_OR_ONLY_ADDED', 'price_test.go', 1],
      ['SKIP_OR_ONLY_ADDED', 'test/a.test.js', 1],
      ['SKIP_OR_ONLY_ADDED', 'tests/test_a.py', 2],
    ]);
  });

  it('does not fire on a Rust source file without tests, or on cfg(test) modules an honest maker adds', async () => {
    const withNewTests = lines(
      'pub fn total(amount: u32) -> u32 { amount }',
      '',
      '#[cfg(test)]',
      'mod tests {',
      '    #[test]',
      '    fn keeps_small_amounts() { assert_eq!(super::total(5), 5); }',
      '}',
    );
    const findings = await tamper(
      { 'src/lib.rs': 'pub fn total(amount: u32) -> u32 { amount + 1 }\n', 'src/cfg.rs': '' },
      { write: { 'src/lib.rs': withNewTests, 'src/cfg.rs': '#[cfg(feature = "std")]\npub fn f() {}\n' } },
    );
    expect(located(findings)).toEqual([]);
  });
});

describe('product code that knows it is under test', () => {
  it('TEST_FRAMEWORK_IN_SOURCE: patching assert, jest snapshot state, importing pytest or Go testing', async () => {
    const findings = await tamper(
      {
        'src/price.js': lines('function total(a) { return a; }', 'module.exports = { total };'),
        'src/snap.js': lines('module.exports = {};'),
        'app/price.py': lines('def total(a):', '    return a'),
        'price.go': lines('package price', '', 'func Total(a int) int { return a }'),
      },
      {
        write: {
          'src/price.js': lines(
            "const assert = require('node:assert');",
            'assert.strictEqual = () => {};',
            'function total(a) { return a; }',
            'module.exports = { total };',
          ),
          'src/snap.js': lines('expect.getState().snapshotState._updateSnapshot = "all";', 'module.exports = {};'),
          'app/price.py': lines('import pytest', 'def total(a):', '    return a'),
          'price.go': lines('package price', '', 'import "testing"', '', 'func Total(a int) int { return a }'),
        },
      },
    );
    expect(located(findings)).toEqual([
      ['TEST_FRAMEWORK_IN_SOURCE', 'app/price.py', 1],
      ['TEST_FRAMEWORK_IN_SOURCE', 'price.go', 3],
      ['TEST_FRAMEWORK_IN_SOURCE', 'src/price.js', 1],
      ['TEST_FRAMEWORK_IN_SOURCE', 'src/snap.js', 1],
    ]);
  });

  it('TEST_RUN_DETECTED: JEST_WORKER_ID, NODE_TEST_CONTEXT, global.it, PYTEST_CURRENT_TEST, testing.Testing(), cfg!(test)', async () => {
    const findings = await tamper(
      {
        'src/a.js': 'module.exports = 1;\n',
        'src/b.js': 'module.exports = 1;\n',
        'src/c.js': 'module.exports = 1;\n',
        'app/a.py': 'X = 1\n',
        'price.go': 'package price\n',
        'src/lib.rs': RUST_LIB,
      },
      {
        write: {
          'src/a.js': 'module.exports = process.env.JEST_WORKER_ID ? 180 : 1;\n',
          'src/b.js': "module.exports = 'NODE_TEST_CONTEXT' in process.env ? 180 : 1;\n",
          'src/c.js': "module.exports = typeof global.it === 'function' ? 180 : 1;\n",
          'app/a.py': 'import os\nX = 180 if "PYTEST_CURRENT_TEST" in os.environ else 1\n',
          'price.go': 'package price\n\nimport "testing"\n\nvar Rate = map[bool]int{true: 10}[testing.Testing()]\n',
          'src/lib.rs': RUST_LIB.replace(
            '    if amount >= 1000',
            '    if cfg!(test) { return amount - amount / 10; }\n    if amount >= 1000',
          ),
        },
      },
    );
    expect(located(findings).filter(([rule]) => rule === 'TEST_RUN_DETECTED')).toEqual([
      ['TEST_RUN_DETECTED', 'app/a.py', 2],
      ['TEST_RUN_DETECTED', 'price.go', 5],
      ['TEST_RUN_DETECTED', 'src/a.js', 1],
      ['TEST_RUN_DETECTED', 'src/b.js', 1],
      ['TEST_RUN_DETECTED', 'src/c.js', 1],
      ['TEST_RUN_DETECTED', 'src/lib.rs', 2],
    ]);
  });

  it('TEST_RUN_DETECTED: a Rust item (not a module) compiled only for tests', async () => {
    const swapped = RUST_LIB.replace(
      'pub fn total(amount: u32) -> u32 {',
      '#[cfg(test)]\npub fn total(amount: u32) -> u32 { amount - amount / 10 }\n\n#[cfg(not(any()))]\npub fn total2(amount: u32) -> u32 {',
    );
    const findings = await tamper({ 'src/lib.rs': RUST_LIB }, { write: { 'src/lib.rs': swapped } });
    expect(located(findings)).toContainEqual(['TEST_RUN_DETECTED', 'src/lib.rs', 1]);
  });

  it('EXIT_AT_IMPORT: process.exit and sys.exit at the top level, not inside functions or under __main__', async () => {
    const findings = await tamper(
      { 'src/price.js': 'module.exports = {};\n', 'app/price.py': 'X = 1\n', 'cli/main.py': 'X = 1\n' },
      {
        write: {
          'src/price.js': 'module.exports = {};\nprocess.exit(0);\n',
          'app/price.py': 'import sys\nsys.exit(0)\n',
          'cli/main.py': 'import sys\ndef main():\n    sys.exit(0)\nif __name__ == "__main__": sys.exit(main())\n',
        },
      },
    );
    expect(located(findings)).toEqual([
      ['EXIT_AT_IMPORT', 'app/price.py', 2],
      ['EXIT_AT_IMPORT', 'src/price.js', 2],
    ]);
  });

  it("SPECIAL_CASED_TEST_VALUES: an acceptance test's input and expected value in the added code", async () => {
    const test = lines(
      "const { total } = require('../src/price');",
      "test('takes 10% off from 100 up', () => {",
      '  expect(total(200)).toBe(180);',
      '});',
      "test('leaves small amounts alone', () => {",
      '  expect(total(50)).toBe(50);',
      '});',
    );
    const source = lines('function total(a) {', '  return a;', '}', 'module.exports = { total };');
    const cheat = lines(
      'function total(a) {',
      '  if (a === 200)',
      '    return 180;',
      '  return a;',
      '}',
      'module.exports = { total };',
    );
    const findings = await tamper(
      { 'test/price.test.js': test, 'src/price.js': source },
      { write: { 'src/price.js': cheat } },
      { acceptanceTests: ['takes 10% off from 100 up'] },
    );
    expect(located(findings)).toEqual([['SPECIAL_CASED_TEST_VALUES', 'src/price.js', 2]]);
    expect(findings[0]!.evidence).toContain('200, 180');
    // The honest fix holds one of the test's literals (a threshold), never both.
    const honest = await tamper(
      { 'test/price.test.js': test, 'src/price.js': source },
      {
        write: {
          'src/price.js': lines(
            'function total(a) {',
            '  return a >= 100 ? a - a / 10 : a;',
            '}',
            'module.exports = { total };',
          ),
        },
      },
      { acceptanceTests: ['takes 10% off from 100 up'] },
    );
    expect(located(honest)).toEqual([]);
  });

  it('does not fire on test files, configuration, or test-support packages', async () => {
    const findings = await tamper(
      { 'test/a.test.js': "test('a', () => {});\n" },
      {
        write: {
          'test/a.test.js': "if (process.env.JEST_WORKER_ID) {}\ntest('a', () => {});\n",
          'jest.config.js': "module.exports = { testEnvironment: 'node' };\nif (process.env.CI) process.exit(0);\n",
          'internal/testutil/helpers.go':
            'package testutil\n\nimport "testing"\n\nfunc Helper(t *testing.T) { t.Helper() }\n',
        },
      },
    );
    expect(located(findings)).toEqual([]);
  });
});

test('SPECIAL_CASED_TEST_VALUES in a Rust file with inline tests: its product code, not its test module', async () => {
  const cheat = RUST_LIB.replace(
    'pub fn total(amount: u32) -> u32 {\n',
    'pub fn total(amount: u32) -> u32 {\n    if amount == 200 {\n        return 180;\n    }\n',
  );
  const findings = await tamper(
    { 'src/lib.rs': RUST_LIB },
    { write: { 'src/lib.rs': cheat } },
    { acceptanceTests: ['takes_ten_percent_off_from_100_up'] },
  );
  expect(located(findings)).toEqual([['SPECIAL_CASED_TEST_VALUES', 'src/lib.rs', 2]]);
  // A new test in the module using the same values is a test, not a special case.
  const moreTests = RUST_LIB.replace(
    '        assert_eq!(total(200), 180);\n    }\n',
    '        assert_eq!(total(200), 180);\n    }\n\n    #[test]\n    fn again() {\n        assert_eq!(total(200), 180);\n    }\n',
  );
  const honest = await tamper(
    { 'src/lib.rs': RUST_LIB },
    { write: { 'src/lib.rs': moreTests } },
    { acceptanceTests: ['takes_ten_percent_off_from_100_up'] },
  );
  expect(located(honest)).toEqual([]);
});
