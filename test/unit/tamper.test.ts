import type { GateName, ResolvedGate } from '../../domain/gates';
import { signatureMaterial } from '../../domain/ledger';
import { lines, located, removeTamperRepos, tamper } from '../support/tamper-repo';

// Tamper rules (docs/design.md §3.4) against real git repositories: each rule with a case that must fire and a
// near miss that must not. The syntax-tree rules (TESTS_WEAKENED, MOCKED_MODULE_UNDER_TEST) have their
// own cases in tamper-syntax.test.ts.

afterAll(removeTamperRepos);

function gate(argv: string[], name: GateName = 'tests'): ResolvedGate {
  return { gate: name, argv, timeoutSeconds: 300, source: 'manifest-inference', detail: 'test' };
}

const SUM_TEST = lines(
  "const test = require('node:test');",
  "const assert = require('node:assert');",
  "const { sum } = require('../src/sum');",
  "test('adds', () => assert.strictEqual(sum(2, 3), 5));",
  "test('negatives', () => assert.strictEqual(sum(-2, -3), -5));",
);
const PACKAGE = JSON.stringify(
  {
    name: 'fixture',
    scripts: { test: 'node --test', lint: 'eslint .', build: 'tsc' },
    dependencies: { left: '1.0.0' },
  },
  null,
  2,
);

describe('GATE_ENTRYPOINT_CHANGED', () => {
  it('fires when the script a gate runs changes, at the first changed line', async () => {
    const findings = await tamper(
      { 'scripts/check.js': lines('const ok = check();', 'process.exit(ok ? 0 : 1);') },
      { write: { 'scripts/check.js': lines('const ok = check();', 'process.exit(0);') } },
      { gates: [gate(['node', 'scripts/check.js'])] },
    );
    expect(located(findings)).toEqual([['GATE_ENTRYPOINT_CHANGED', 'scripts/check.js', 2]]);
    expect(findings[0]!.topic).toBe('security');
    expect(findings[0]!.evidence).toContain('+2: process.exit(0);');
    expect(findings[0]!.evidence).toContain('-2: process.exit(ok ? 0 : 1);');
  });

  it('fires on a shell script named as the program', async () => {
    const findings = await tamper(
      { 'test.sh': lines('#!/bin/sh', 'npm test') },
      { write: { 'test.sh': lines('#!/bin/sh', 'exit 0') } },
      { gates: [gate(['bash', './test.sh'])] },
    );
    expect(located(findings)).toEqual([['GATE_ENTRYPOINT_CHANGED', 'test.sh', 2]]);
  });

  it('fires when the package.json script a gate names changes, at that key', async () => {
    const changed = PACKAGE.replace('"node --test"', '"node --test || true"');
    const findings = await tamper(
      { 'package.json': PACKAGE },
      { write: { 'package.json': changed } },
      { gates: [gate(['npm', 'test'])] },
    );
    expect(located(findings)).toEqual([['GATE_ENTRYPOINT_CHANGED', 'package.json', 4]]);
    expect(findings[0]!.evidence).toContain('scripts.test');
    expect(findings[0]!.evidence).toContain('"node --test" → "node --test || true"');
  });

  it('follows `npm run lint` into the tool it runs and fires on that tool config', async () => {
    const findings = await tamper(
      {
        'package.json': PACKAGE,
        'eslint.config.mjs': lines('export default [', '  { rules: { eqeqeq: "error" } },', '];'),
      },
      { write: { 'eslint.config.mjs': lines('export default [', '  { rules: { eqeqeq: "off" } },', '];') } },
      { gates: [gate(['npm', 'run', 'lint'], 'lint')] },
    );
    expect(located(findings)).toEqual([['GATE_ENTRYPOINT_CHANGED', 'eslint.config.mjs', 2]]);
    expect(findings[0]!.evidence).toContain('lint gate (npm run lint) → scripts.lint');
  });

  it('fires on a deleted tool config at line 1 of the base file', async () => {
    const findings = await tamper(
      { 'jest.config.js': lines("module.exports = { testEnvironment: 'node' };") },
      { remove: ['jest.config.js'] },
      { gates: [gate(['npx', 'jest', '--ci'])] },
    );
    expect(located(findings)).toEqual([['GATE_ENTRYPOINT_CHANGED', 'jest.config.js', 1]]);
    expect(findings[0]!.evidence).toContain('deleted');
  });

  it('fires on the pytest section of pyproject.toml but not on its dependencies', async () => {
    const pyproject = lines(
      '[project]',
      'name = "app"',
      'dependencies = ["requests"]',
      '',
      '[tool.pytest.ini_options]',
      'addopts = "-q"',
    );
    const gates = [gate(['python', '-m', 'pytest'])];
    const weakened = await tamper(
      { 'pyproject.toml': pyproject },
      { write: { 'pyproject.toml': pyproject.replace('"-q"', '"-q -k not slow"') } },
      { gates },
    );
    expect(located(weakened)).toEqual([['GATE_ENTRYPOINT_CHANGED', 'pyproject.toml', 5]]);
    const bumped = await tamper(
      { 'pyproject.toml': pyproject },
      { write: { 'pyproject.toml': pyproject.replace('"requests"', '"requests", "httpx"') } },
      { gates },
    );
    expect(bumped).toEqual([]);
  });

  it('fires on the Makefile when the gate runs make, and on the repository gate config', async () => {
    const findings = await tamper(
      {
        Makefile: lines('test:', '\tgo test ./...'),
        '.ai-engineering-loop/verification.json': '{"tests": ["make", "test"]}\n',
      },
      {
        write: {
          Makefile: lines('test:', '\ttrue'),
          '.ai-engineering-loop/verification.json': '{"tests": ["true"]}\n',
        },
      },
      { gates: [gate(['make', 'test'])] },
    );
    expect(located(findings)).toEqual([
      ['GATE_ENTRYPOINT_CHANGED', '.ai-engineering-loop/verification.json', 1],
      ['GATE_ENTRYPOINT_CHANGED', 'Makefile', 2],
    ]);
  });

  it('does not fire on package.json dependencies, scripts no gate names, or a new unrelated file', async () => {
    const changed = PACKAGE.replace('"left": "1.0.0"', '"left": "2.0.0"').replace(
      '"build": "tsc"',
      '"build": "tsc -b"',
    );
    const findings = await tamper(
      { 'package.json': PACKAGE, 'scripts/check.js': 'process.exit(1);\n' },
      { write: { 'package.json': changed, 'scripts/other.js': 'process.exit(0);\n' } },
      { gates: [gate(['npm', 'test']), gate(['node', 'scripts/check.js'], 'lint')] },
    );
    expect(findings).toEqual([]);
  });
});

describe('TESTS_DELETED', () => {
  it('fires on a deleted test file and on one renamed out of test paths, at line 1 of the base file', async () => {
    const findings = await tamper(
      { 'test/sum.test.js': SUM_TEST, 'src/sum.spec.ts': SUM_TEST },
      { remove: ['test/sum.test.js'], rename: [['src/sum.spec.ts', 'src/sum-checks.ts']] },
    );
    expect(located(findings)).toEqual([
      ['TESTS_DELETED', 'src/sum.spec.ts', 1],
      ['TESTS_DELETED', 'test/sum.test.js', 1],
    ]);
    expect(findings[1]!.evidence).toContain('2 test case(s) and 2 assertion(s)');
  });

  it('fires on a test file renamed to an extension no runner loads, though the name still looks like a test', async () => {
    const python = lines('def test_total():', '    assert total([1, 2]) == 3');
    const findings = await tamper(
      { 'test/sum.test.js': SUM_TEST, 'tests/test_total.py': python, 'tests/test_x.py': python },
      {
        rename: [
          ['test/sum.test.js', 'test/sum.test.js.bak'],
          ['tests/test_total.py', 'tests/test_total.py.orig'],
          ['tests/test_x.py', 'tests/x_test.txt'],
        ],
      },
    );
    expect(located(findings)).toEqual([
      ['TESTS_DELETED', 'test/sum.test.js', 1],
      ['TESTS_DELETED', 'tests/test_total.py', 1],
      ['TESTS_DELETED', 'tests/test_x.py', 1],
    ]);
    expect(findings[0]!.evidence).toContain('renamed to test/sum.test.js.bak, which is not a test path');
    expect(findings[2]!.evidence).toContain('renamed to tests/x_test.txt');
  });

  it('does not fire on a test file renamed to another test path or a deleted source file', async () => {
    const findings = await tamper(
      { 'test/sum.test.js': SUM_TEST, 'src/unused.js': 'module.exports = 1;\n' },
      { remove: ['src/unused.js'], rename: [['test/sum.test.js', 'test/add.test.js']] },
    );
    expect(findings).toEqual([]);
  });
});

describe('TESTS_WEAKENED', () => {
  it('fires when a test case is removed, pointing at the line above the gap', async () => {
    const weaker = SUM_TEST.replace("test('adds', () => assert.strictEqual(sum(2, 3), 5));\n", '');
    const findings = await tamper({ 'test/sum.test.js': SUM_TEST }, { write: { 'test/sum.test.js': weaker } });
    expect(located(findings)).toEqual([['TESTS_WEAKENED', 'test/sum.test.js', 3]]);
    expect(findings[0]!.title).toBe('Test weakened: adds');
    expect(findings[0]!.evidence).toContain(
      '- test removed (base line 4); it checked: assert.strictEqual(sum(2, 3), 5)',
    );
  });

  it('fires when an assertion is commented out', async () => {
    const test = lines('def test_total():', '    assert total([1, 2]) == 3', '    assert total([]) == 0');
    const findings = await tamper(
      { 'tests/test_total.py': test },
      { write: { 'tests/test_total.py': test.replace('    assert total([])', '    # assert total([])') } },
    );
    expect(located(findings)).toEqual([['TESTS_WEAKENED', 'tests/test_total.py', 3]]);
    expect(findings[0]!.evidence).toContain('- assertion removed (base line 3): assert total([]) == 0');
  });

  it('still counts Go test files (no syntax tree): a removed t.Fatal is fewer assertions', async () => {
    const test = lines(
      'package cart',
      'func TestTotal(t *testing.T) {',
      '\tif Total() != 180 {',
      '\t\tt.Fatal("total")',
      '\t}',
      '}',
    );
    const findings = await tamper(
      { 'cart_test.go': test },
      { write: { 'cart_test.go': test.replace('\t\tt.Fatal("total")\n', '') } },
    );
    expect(located(findings)).toEqual([['TESTS_WEAKENED', 'cart_test.go', 3]]);
    expect(findings[0]!.title).toBe('Existing tests weakened');
    expect(findings[0]!.evidence).toContain('Test cases 1 → 1, assertions 1 → 0');
  });

  it('does not fire on a test file with more tests, or on source code losing an assert', async () => {
    const source = lines(
      'const assert = require("node:assert");',
      'assert(config.port > 0);',
      'module.exports = config;',
    );
    const findings = await tamper(
      { 'test/sum.test.js': SUM_TEST, 'src/config.js': source },
      {
        write: {
          'test/sum.test.js': SUM_TEST + "test('zero', () => assert.strictEqual(sum(0, 0), 0));\n",
          'src/config.js': source.replace('assert(config.port > 0);\n', ''),
        },
      },
    );
    expect(findings).toEqual([]);
  });
});

describe('SKIP_OR_ONLY_ADDED', () => {
  it('fires on .only in a new test file, @pytest.mark.skip and Go t.Skip', async () => {
    const findings = await tamper(
      {
        'tests/test_api.py': lines('def test_get():', '    assert get() == 200'),
        'api_test.go': lines('package api', 'func TestGet(t *testing.T) {', '}'),
      },
      {
        write: {
          'test/new.test.ts': lines("describe('x', () => {", "  it.only('works', () => expect(1).toBe(1));", '});'),
          'tests/test_api.py': lines('@pytest.mark.skip(reason="flaky")', 'def test_get():', '    assert get() == 200'),
          'api_test.go': lines('package api', 'func TestGet(t *testing.T) {', '\tt.Skip("later")', '}'),
        },
      },
    );
    expect(located(findings)).toEqual([
      ['SKIP_OR_ONLY_ADDED', 'api_test.go', 3],
      ['SKIP_OR_ONLY_ADDED', 'test/new.test.ts', 2],
      ['SKIP_OR_ONLY_ADDED', 'tests/test_api.py', 1],
    ]);
    expect(findings[1]!.evidence).toContain("+2: it.only('works'");
  });

  it('does not fire on "skip" in source, a removed skip, or a skipped test moved within its file', async () => {
    const spec = lines("it.skip('slow', () => {});", "it('fast', () => {});");
    const findings = await tamper(
      {
        'src/pager.ts': lines('export const mode = 1;'),
        'src/reader.go': lines('package reader'),
        'a.test.ts': spec,
        'b.test.ts': spec,
      },
      {
        write: {
          'src/pager.ts': lines("export const mode = 'skip';", 'export const rest = items.skip(2).only(3);'),
          'src/reader.go': lines('package reader', 'func f() { r.Skip(4) }'),
          'a.test.ts': lines("it('slow', () => {});", "it('fast', () => {});"),
          'b.test.ts': lines("it('fast', () => {});", "it.skip('slow', () => {});"),
        },
      },
    );
    expect(findings).toEqual([]);
  });
});

describe('SUPPRESSION_ADDED', () => {
  it('fires on an added @ts-ignore and # type: ignore, at the added line', async () => {
    const findings = await tamper(
      { 'src/a.ts': lines('const a = 1;', 'export const b: string = a;'), 'app/main.py': lines('x: int = "y"') },
      {
        write: {
          'src/a.ts': lines('const a = 1;', '// @ts-ignore', 'export const b: string = a;'),
          'app/main.py': lines('x: int = "y"  # type: ignore'),
        },
      },
    );
    expect(located(findings)).toEqual([
      ['SUPPRESSION_ADDED', 'app/main.py', 1],
      ['SUPPRESSION_ADDED', 'src/a.ts', 2],
    ]);
    expect(findings[1]!.evidence).toContain('+2: // @ts-ignore');
  });

  it('does not fire when a suppression is removed or only mentioned in docs', async () => {
    const findings = await tamper(
      { 'src/a.ts': lines('// eslint-disable-next-line no-console', 'console.log(1);'), 'README.md': '# App\n' },
      {
        write: {
          'src/a.ts': lines('console.log(1);'),
          'README.md': lines('# App', 'Never add `eslint-disable` or `@ts-ignore`.'),
        },
      },
    );
    expect(findings).toEqual([]);
  });
});

describe('OUT_OF_SCOPE_CHANGE', () => {
  const files = { 'src/a.ts': 'export const a = 1;\n', 'README.md': lines('# App', 'Intro') };

  it('allows changes inside scope and fires on a file outside it', async () => {
    const findings = await tamper(
      files,
      { write: { 'src/a.ts': 'export const a = 2;\n', 'README.md': lines('# App', 'Changed intro') } },
      { scope: ['src/**'] },
    );
    expect(located(findings)).toEqual([['OUT_OF_SCOPE_CHANGE', 'README.md', 2]]);
  });

  it('fires on an outOfScope glob and ignores free-text entries', async () => {
    const findings = await tamper(
      files,
      { write: { 'billing/invoice.ts': 'export {};\n', 'migrations/001_init.sql': 'create table t ();\n' } },
      { outOfScope: ['do not touch billing', 'migrations/**'] },
    );
    expect(located(findings)).toEqual([['OUT_OF_SCOPE_CHANGE', 'migrations/001_init.sql', 1]]);
    expect(findings[0]!.evidence).toContain('`migrations/**`');
  });
});

describe('DANGLING_SYMLINK', () => {
  it('fires on a committed link to nothing, an absolute link and one out of the repository', async () => {
    const findings = await tamper(
      { 'src/a.js': 'module.exports = 1;\n' },
      { link: { 'src/missing.js': 'gone.js', 'etc-passwd': '/etc/passwd', 'up/out': '../../outside' } },
    );
    expect(located(findings).sort()).toEqual([
      ['DANGLING_SYMLINK', 'etc-passwd', 1],
      ['DANGLING_SYMLINK', 'src/missing.js', 1],
      ['DANGLING_SYMLINK', 'up/out', 1],
    ]);
    const missing = findings.find((f) => f.location.file === 'src/missing.js')!;
    expect(missing.topic).toBe('correctness');
    expect(missing.evidence).toBe(
      'src/missing.js is a symbolic link to "gone.js", which the checkpoint does not hold.',
    );
  });

  it("does not fire on links to a committed file, a directory or the repository's root", async () => {
    const findings = await tamper(
      { 'src/a.js': 'module.exports = 1;\n', 'docs/readme.md': 'x\n' },
      {
        link: { 'src/b.js': 'a.js', lib: 'src', here: '.', 'docs/up': '../src/a.js' },
        write: { 'docs/readme.md': 'y\n' },
      },
    );
    expect(located(findings)).toEqual([]);
  });
});

describe('detectTampering', () => {
  it('returns nothing when the checkpoint changes nothing', async () => {
    expect(await tamper({ 'src/a.ts': 'export {};\n' }, {}, { scope: ['lib/**'] })).toEqual([]);
  });

  it('reads paths with spaces or quotes, and removed lines that look like diff headers', async () => {
    const findings = await tamper(
      { 'src/my file.ts': lines('a();'), 'src/we"ird.ts': lines('b();'), 'src/z.ts': lines('-- a/z.ts', 'z();') },
      {
        write: {
          'src/my file.ts': lines('a();', '// @ts-ignore'),
          'src/we"ird.ts': lines('// @ts-nocheck', 'b();'),
          // Diff lines "--- a/z.ts" and "+++ b/other.ts": only the hunk counts tell them from file headers.
          'src/z.ts': lines('++ b/other.ts', '// eslint-disable-next-line', 'z();'),
        },
      },
    );
    expect(located(findings)).toEqual([
      ['SUPPRESSION_ADDED', 'src/my file.ts', 2],
      ['SUPPRESSION_ADDED', 'src/we"ird.ts', 1],
      ['SUPPRESSION_ADDED', 'src/z.ts', 2],
    ]);
  });

  it('keeps the same signature when the same tampering moves to another line', async () => {
    const first = await tamper(
      { 'src/a.ts': lines('a();') },
      { write: { 'src/a.ts': lines('// @ts-ignore', 'a();') } },
    );
    const later = await tamper(
      { 'src/a.ts': lines('a();') },
      { write: { 'src/a.ts': lines('a();', 'b();', '// @ts-ignore', 'c();') } },
    );
    expect(first[0]!.location.startLine).not.toBe(later[0]!.location.startLine);
    expect(signatureMaterial(later[0]!)).toBe(signatureMaterial(first[0]!));
  });
});
