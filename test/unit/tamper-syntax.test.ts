import { pythonInventories } from '../../activities/tamper/python-syntax';
import { signatureMaterial } from '../../domain/ledger';
import { lines, located, removeTamperRepos, tamper, type Change } from '../support/tamper-repo';

// The rules that read test files' syntax trees (TypeScript's parser for JS/TS, Python's ast), against
// real git repositories: every kind of weakening in both languages must fire, honest edits must not.

afterAll(removeTamperRepos);

const JS_FILE = 'test/cart.test.js';
const JS_TEST = lines(
  "const { total } = require('../src/cart');",
  '',
  "describe('cart', () => {",
  "  it('totals the items', () => {",
  '    const items = [100, 80];',
  '    expect(total(items)).toBe(180);',
  '  });',
  '',
  "  it('is empty without items', () => {",
  '    expect(total([])).toBe(0);',
  '  });',
  '});',
);

const PY_FILE = 'tests/test_cart.py';
const PY_TEST = lines(
  'import pytest',
  'from app.cart import total',
  '',
  '',
  'def test_totals_the_items():',
  '    items = [100, 80]',
  '    assert total(items) == 180',
  '',
  '',
  'def test_empty():',
  '    assert total([]) == 0',
);

/** The TESTS_WEAKENED findings when the maker turns the base test file into `after`. */
async function weakened(file: string, before: string, after: string) {
  const findings = await tamper({ [file]: before }, { write: { [file]: after } });
  return findings.filter((f) => f.rule === 'TESTS_WEAKENED');
}

function edit(text: string, from: string, to: string): string {
  expect(text).toContain(from);
  return text.replace(from, to);
}

describe('TESTS_WEAKENED in JS/TS, from the syntax tree', () => {
  const totals = 'Test weakened: cart > totals the items';
  const empty = 'Test weakened: cart > is empty without items';

  it.each([
    [
      'a matcher loosened',
      edit(JS_TEST, 'toBe(180)', 'toBeDefined()'),
      totals,
      6,
      '- assertion weakened (checks an exact value → checks only that a value exists, is truthy or differs), line 6: ' +
        'expect(total(items)).toBe(180) → expect(total(items)).toBeDefined()',
    ],
    [
      'toBe turned into not.toBe',
      edit(JS_TEST, 'toBe(180)', 'not.toBe(0)'),
      totals,
      6,
      'expect(total(items)).toBe(180) → expect(total(items)).not.toBe(0)',
    ],
    [
      'a literal checked instead of the code',
      edit(JS_TEST, 'expect(total(items))', 'expect(180)'),
      totals,
      6,
      '(checks an exact value → checks nothing)',
    ],
    [
      'the expected value changed',
      edit(JS_TEST, 'toBe(180)', 'toBe(200)'),
      totals,
      6,
      '- expected value changed, line 6: expect(total(items)).toBe(180) → expect(total(items)).toBe(200)',
    ],
    [
      'an early return',
      edit(JS_TEST, '    const items', '    return;\n    const items'),
      totals,
      7,
      '- line 7 no longer runs, because of `return;` (line 5): expect(total(items)).toBe(180)',
    ],
    [
      'an assertion inside if (false)',
      edit(JS_TEST, '    expect(total([])).toBe(0);', '    if (false) expect(total([])).toBe(0);'),
      empty,
      10,
      'because of `if (false) expect(total([])).toBe(0);` (line 10)',
    ],
    [
      'an assertion removed',
      edit(JS_TEST, '    expect(total([])).toBe(0);\n', ''),
      empty,
      9,
      '- assertion removed (base line 10): expect(total([])).toBe(0)',
    ],
    [
      'a test removed',
      edit(JS_TEST, "\n  it('is empty without items', () => {\n    expect(total([])).toBe(0);\n  });\n", '\n'),
      empty,
      8,
      '- test removed (base line 9); it checked: expect(total([])).toBe(0)',
    ],
    [
      'a try/catch swallowing the failure',
      edit(
        JS_TEST,
        '    expect(total(items)).toBe(180);',
        '    try {\n      expect(total(items)).toBe(180);\n    } catch (e) {}',
      ),
      totals,
      7,
      '- line 7 can no longer fail the test: `catch (e) {}` (line 8) catches it: expect(total(items)).toBe(180)',
    ],
  ])('fires on %s, at the affected line', async (_kind, after, title, line, evidence) => {
    const findings = await weakened(JS_FILE, JS_TEST, after);
    expect(located(findings)).toEqual([['TESTS_WEAKENED', JS_FILE, line]]);
    expect(findings[0]!.title).toBe(title);
    expect(findings[0]!.topic).toBe('testing_gaps');
    expect(findings[0]!.evidence).toContain(evidence);
  });

  it('reads TypeScript, it.each titles, node:assert and a toThrow losing its error', async () => {
    const before = lines(
      "import assert from 'node:assert';",
      "test.each([[1, 2]])('adds %i', (a, b) => {",
      '  assert.strictEqual(sum(a, b), 3);',
      "  expect(() => parse('')).toThrow('empty input');",
      '});',
    );
    const after = edit(
      edit(before, 'assert.strictEqual(sum(a, b), 3)', 'assert.ok(sum(a, b))'),
      "toThrow('empty input')",
      'toThrow()',
    );
    const findings = await weakened('src/sum.spec.ts', before, after);
    expect(located(findings)).toEqual([['TESTS_WEAKENED', 'src/sum.spec.ts', 3]]);
    expect(findings[0]!.title).toBe('Test weakened: adds %i');
    expect(findings[0]!.evidence).toContain('assert.strictEqual(sum(a, b), 3) → assert.ok(sum(a, b))');
    expect(findings[0]!.evidence).toContain(
      "(checks an exact value → checks only that something happened), line 4: expect(() => parse('')).toThrow('empty input')",
    );
  });

  it.each([
    [
      'a new test',
      edit(JS_TEST, '});\n', "  it('totals one item', () => {\n    expect(total([5])).toBe(5);\n  });\n});\n"),
    ],
    [
      'another assertion',
      edit(
        JS_TEST,
        '    expect(total(items)).toBe(180);',
        '    expect(total(items)).toBe(180);\n    expect(total(items)).toBeGreaterThan(0);',
      ),
    ],
    [
      'reformatting and renamed variables',
      lines(
        'const { total } = require("../src/cart");',
        'describe("cart", () => {',
        '  it("totals the items", () => {',
        '    const cartItems = [',
        '      100,',
        '      80,',
        '    ];',
        '    expect(',
        '      total(cartItems),',
        '    ).toBe(180)',
        '  })',
        '  it("is empty without items", () => expect(total([])).toBe(0))',
        '})',
      ),
    ],
    [
      'a test moved within the file',
      lines(
        "const { total } = require('../src/cart');",
        "describe('cart', () => {",
        "  it('is empty without items', () => {",
        '    expect(total([])).toBe(0);',
        '  });',
        "  it('totals the items', () => {",
        '    const items = [100, 80];',
        '    expect(total(items)).toBe(180);',
        '  });',
        '});',
      ),
    ],
    ['a test renamed, its assertions kept', edit(JS_TEST, 'is empty without items', 'returns 0 without items')],
    [
      'setup lines changed, assertions kept',
      edit(
        JS_TEST,
        '    const items = [100, 80];',
        '    const cart = newCart();\n    const items = cart.add(100).add(80).items();',
      ),
    ],
  ])('does not fire on %s', async (_change, after) => {
    expect(await tamper({ [JS_FILE]: JS_TEST }, { write: { [JS_FILE]: after } })).toEqual([]);
  });

  it('does not fire on a test moved to another test file', async () => {
    const rest = edit(
      JS_TEST,
      "\n  it('is empty without items', () => {\n    expect(total([])).toBe(0);\n  });\n",
      '\n',
    );
    const moved = lines(
      "const { total } = require('../src/cart');",
      "describe('cart', () => {",
      "  it('is empty without items', () => expect(total([])).toBe(0));",
      '});',
    );
    expect(await tamper({ [JS_FILE]: JS_TEST }, { write: { [JS_FILE]: rest, 'test/empty.test.js': moved } })).toEqual(
      [],
    );
  });

  it('keeps the title, so the signature, when the same weakening moves to another line', async () => {
    const first = await weakened(JS_FILE, JS_TEST, edit(JS_TEST, 'toBe(180)', 'toBeDefined()'));
    const later = await weakened(
      JS_FILE,
      JS_TEST,
      edit(JS_TEST, '    const items', '    // setup\n    const items').replace('toBe(180)', 'toBeTruthy()'),
    );
    expect(first[0]!.location.startLine).not.toBe(later[0]!.location.startLine);
    expect(signatureMaterial(later[0]!)).toBe(signatureMaterial(first[0]!));
  });
});

describe('TESTS_WEAKENED in Python, from the ast module', () => {
  it.each([
    [
      '== 180 turned into is not None',
      edit(PY_TEST, '== 180', 'is not None'),
      'test_totals_the_items',
      7,
      '(checks an exact value → checks only that a value exists, is truthy or differs), line 7: assert total(items) == 180 → assert total(items) is not None',
    ],
    [
      'the expected value changed',
      edit(PY_TEST, '== 180', '== 200'),
      'test_totals_the_items',
      7,
      '- expected value changed, line 7: assert total(items) == 180 → assert total(items) == 200',
    ],
    [
      'an early return',
      edit(PY_TEST, '    items = [100, 80]', '    return\n    items = [100, 80]'),
      'test_totals_the_items',
      8,
      '- line 8 no longer runs, because of `return` (line 6): assert total(items) == 180',
    ],
    [
      'pytest.skip() inserted',
      edit(PY_TEST, '    items = [100, 80]', '    pytest.skip("later")\n    items = [100, 80]'),
      'test_totals_the_items',
      8,
      'because of `pytest.skip("later")` (line 6)',
    ],
    [
      'an assertion removed',
      edit(PY_TEST, '    assert total([]) == 0', '    total([])'),
      'test_empty',
      11,
      '- assertion removed (base line 11): assert total([]) == 0',
    ],
    [
      'a test removed',
      edit(PY_TEST, '\n\ndef test_empty():\n    assert total([]) == 0\n', ''),
      'test_empty',
      7,
      '- test removed (base line 10); it checked: assert total([]) == 0',
    ],
    [
      'a try/except swallowing the failure',
      edit(
        PY_TEST,
        '    assert total(items) == 180',
        '    try:\n        assert total(items) == 180\n    except AssertionError:\n        pass',
      ),
      'test_totals_the_items',
      8,
      '`except AssertionError:` (line 9) catches it',
    ],
    [
      'a tuple assert, always true',
      edit(PY_TEST, 'assert total(items) == 180', 'assert (total(items) == 180, "total")'),
      'test_totals_the_items',
      7,
      '→ checks nothing',
    ],
  ])('fires on %s, at the affected line', async (_kind, after, test, line, evidence) => {
    const findings = await weakened(PY_FILE, PY_TEST, after);
    expect(located(findings)).toEqual([['TESTS_WEAKENED', PY_FILE, line]]);
    expect(findings[0]!.title).toBe(`Test weakened: ${test}`);
    expect(findings[0]!.evidence).toContain(evidence);
  });

  it('reads unittest classes and a module constant holding the expected value', async () => {
    const before = lines(
      'import unittest',
      'EXPECTED = 180',
      'class TestCart(unittest.TestCase):',
      '    def test_total(self):',
      '        self.assertEqual(total([100, 80]), EXPECTED)',
    );
    const findings = await weakened('tests/test_unit.py', before, edit(before, 'EXPECTED = 180', 'EXPECTED = 200'));
    expect(located(findings)).toEqual([['TESTS_WEAKENED', 'tests/test_unit.py', 5]]);
    expect(findings[0]!.title).toBe('Test weakened: TestCart::test_total');
    expect(findings[0]!.evidence).toContain('expected value changed');
  });

  it.each([
    ['a new test', `${PY_TEST}\n\ndef test_one_item():\n    assert total([5]) == 5\n`],
    [
      'another assertion',
      edit(PY_TEST, '    assert total(items) == 180', '    assert total(items) == 180\n    assert len(items) == 2'),
    ],
    [
      'reformatting and renamed variables',
      edit(
        PY_TEST,
        '    items = [100, 80]\n    assert total(items) == 180',
        '    cart_items = [\n        100,\n        80,\n    ]\n    assert (total(cart_items)\n            == 180)',
      ),
    ],
    [
      'a test moved within the file',
      lines(
        'import pytest',
        'from app.cart import total',
        'def test_empty():',
        '    assert total([]) == 0',
        'def test_totals_the_items():',
        '    items = [100, 80]',
        '    assert total(items) == 180',
      ),
    ],
    [
      'setup lines changed, assertions kept',
      edit(PY_TEST, '    items = [100, 80]', '    cart = Cart()\n    items = cart.add(100).add(80).items'),
    ],
  ])('does not fire on %s', async (_change, after) => {
    expect(await tamper({ [PY_FILE]: PY_TEST }, { write: { [PY_FILE]: after } })).toEqual([]);
  });

  it('reads no Python inventory, warning once, when python3 cannot be found', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(await pythonInventories(['def test_a():\n    assert a() == 1\n'])).toEqual([null]);
      expect(await pythonInventories(['def test_b():\n    pass\n'])).toEqual([null]);
      expect(warn.mock.calls).toEqual([[expect.stringContaining('python3 is not installed')]]);
    } finally {
      process.env.PATH = path;
      warn.mockRestore();
    }
  });
});

describe('MOCKED_MODULE_UNDER_TEST', () => {
  const source = {
    'src/sum.js': 'module.exports.sum = (a, b) => a + b;\n',
    'src/pricing.ts': 'export const rate = () => 1;\n',
  };
  const jsTest = lines("const { sum } = require('../src/sum');", "test('adds', () => expect(sum(2, 3)).toBe(5));");

  async function mocked(files: Record<string, string>, change: Change) {
    return (await tamper(files, change)).filter((f) => f.rule === 'MOCKED_MODULE_UNDER_TEST');
  }

  it("fires on an added jest.mock('../src/sum'), not on the jest.mock('axios') beside it", async () => {
    const after = lines("jest.mock('axios');", "jest.mock('../src/sum');", jsTest);
    const findings = await mocked({ ...source, 'test/sum.test.js': jsTest }, { write: { 'test/sum.test.js': after } });
    expect(located(findings)).toEqual([['MOCKED_MODULE_UNDER_TEST', 'test/sum.test.js', 2]]);
    expect(findings[0]!.title).toBe('Repository module replaced by a mock in a test');
    expect(findings[0]!.evidence).toContain("+2: jest.mock('../src/sum') (replaces src/sum.js)");
    expect(findings[0]!.evidence).not.toContain('axios');
  });

  it('fires on a spy given a mock value on an imported repository module, in a new TypeScript test', async () => {
    const spec = lines(
      "import * as pricing from '../src/pricing.js';",
      "test('rate', () => {",
      "  vi.spyOn(pricing, 'rate').mockReturnValue(2);",
      '});',
    );
    const findings = await mocked(source, { write: { 'test/pricing.test.ts': spec } });
    expect(located(findings)).toEqual([['MOCKED_MODULE_UNDER_TEST', 'test/pricing.test.ts', 3]]);
    expect(findings[0]!.evidence).toContain("vi.spyOn(pricing, 'rate').mockReturnValue(2) (replaces src/pricing.ts)");
  });

  it("fires on node:test's mock.method with an implementation, on a required repository module", async () => {
    const after = lines(
      "const { mock, test } = require('node:test');",
      "mock.method(require('../src/sum'), 'sum', () => 5);",
      jsTest,
    );
    const findings = await mocked({ ...source, 'test/sum.test.js': jsTest }, { write: { 'test/sum.test.js': after } });
    expect(located(findings)).toEqual([['MOCKED_MODULE_UNDER_TEST', 'test/sum.test.js', 2]]);
  });

  it('does not fire on mocking axios, on a mock already there at base, or on a spy that keeps the real code', async () => {
    const base = lines("jest.mock('../src/sum');", jsTest);
    const after = lines(
      "jest.mock('axios');",
      jsTest,
      "jest.mock('../src/sum');",
      "test('spy', () => { const pricing = require('../src/pricing'); jest.spyOn(pricing, 'rate'); mock.method(pricing, 'rate'); });",
    );
    expect(await mocked({ ...source, 'test/sum.test.js': base }, { write: { 'test/sum.test.js': after } })).toEqual([]);
  });

  describe('through a path alias', () => {
    const tsTest = lines("import { rate } from '@/pricing';", "test('rate', () => expect(rate()).toBe(1));");
    const mockedVia = (specifier: string) => lines(`jest.mock('${specifier}');`, tsTest);
    const aliasCases: [string, Record<string, string>, string][] = [
      [
        'tsconfig paths (with comments and a baseUrl)',
        {
          'tsconfig.json':
            '{\n  // aliases\n  "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["src/*"] } },\n}\n',
        },
        '@/pricing',
      ],
      [
        "a jest config's moduleNameMapper",
        { 'jest.config.js': "module.exports = {\n  moduleNameMapper: { '^~/(.*)$': '<rootDir>/src/$1' },\n};\n" },
        '~/pricing',
      ],
      [
        "package.json's jest.moduleNameMapper",
        { 'package.json': JSON.stringify({ jest: { moduleNameMapper: { '^#lib/(.*)$': '<rootDir>/src/$1' } } }) },
        '#lib/pricing',
      ],
      [
        "a Vite config's alias",
        {
          'vite.config.ts':
            "import path from 'node:path';\nexport default { resolve: { alias: { '@': path.resolve(__dirname, './src') } } };\n",
        },
        '@/pricing',
      ],
    ];

    it.each(aliasCases)(
      'fires on a mock of the module under test named through %s',
      async (_how, config, specifier) => {
        const files = { ...source, ...config, 'test/pricing.test.ts': tsTest };
        const findings = await mocked(files, { write: { 'test/pricing.test.ts': mockedVia(specifier) } });
        expect(located(findings)).toEqual([['MOCKED_MODULE_UNDER_TEST', 'test/pricing.test.ts', 1]]);
        expect(findings[0]!.evidence).toContain(`jest.mock('${specifier}') (replaces src/pricing.ts)`);
      },
    );

    it('does not fire on a scoped package the aliases do not name, or without aliases', async () => {
      const config = { 'tsconfig.json': '{ "compilerOptions": { "paths": { "@/*": ["src/*"] } } }' };
      const files = { ...source, ...config, 'test/pricing.test.ts': tsTest };
      expect(await mocked(files, { write: { 'test/pricing.test.ts': mockedVia('@aws-sdk/client-s3') } })).toEqual([]);
      const unaliased = { ...source, 'test/pricing.test.ts': tsTest };
      expect(await mocked(unaliased, { write: { 'test/pricing.test.ts': mockedVia('@/pricing') } })).toEqual([]);
    });
  });

  const pyTest = lines('from app.pricing import total', '', 'def test_total():', '    assert total([100, 80]) == 180');
  const app = { 'app/__init__.py': '', 'app/pricing.py': 'def total(items):\n    return sum(items)\n' };

  it("fires on @patch('app.pricing.total') when app/pricing.py is in the repository", async () => {
    const after = lines(
      'from unittest.mock import patch',
      pyTest.replace('def test_total', "@patch('app.pricing.total', return_value=180)\ndef test_total"),
    );
    const findings = await mocked(
      { ...app, 'tests/test_pricing.py': pyTest },
      { write: { 'tests/test_pricing.py': after } },
    );
    expect(located(findings)).toEqual([['MOCKED_MODULE_UNDER_TEST', 'tests/test_pricing.py', 4]]);
    expect(findings[0]!.evidence).toContain("patch('app.pricing.total', return_value=180) (replaces app/pricing.py)");
  });

  it('fires on monkeypatch.setattr of an imported repository module', async () => {
    const after = lines(
      'from app import pricing',
      'def test_total(monkeypatch):',
      "    monkeypatch.setattr(pricing, 'total', lambda items: 180)",
      '    assert pricing.total([100, 80]) == 180',
    );
    const findings = await mocked(
      { ...app, 'tests/test_pricing.py': pyTest },
      { write: { 'tests/test_pricing.py': after } },
    );
    expect(located(findings)).toEqual([['MOCKED_MODULE_UNDER_TEST', 'tests/test_pricing.py', 3]]);
  });

  it("does not fire on @patch('requests.get')", async () => {
    const after = lines(
      'from unittest.mock import patch',
      pyTest.replace('def test_total', "@patch('requests.get')\ndef test_total"),
    );
    expect(
      await mocked({ ...app, 'tests/test_pricing.py': pyTest }, { write: { 'tests/test_pricing.py': after } }),
    ).toEqual([]);
  });
});
