import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { frozenTestsForReview } from '../../activities/review/frozen-tests-for-review';
import { quotesShownCode } from '../../activities/review/triage';
import { goalContractSchema } from '../../domain/contract';
import { loopRequest } from '../support/loop-request';
import { frozenTestFindings, type TestsRun } from '../../analysis/verification/frozen-test-findings';
import { editedBaseTests, withBaseVersions } from '../../activities/verification/frozen-tests';
import { withBaseTestModules } from '../../analysis/verification/rust-test-modules';
import { loadChanges, readAt } from '../../activities/tamper/change-set';
import type { TestReport } from '../../analysis/test-reports';
import { git } from '../support/test-git';

// Frozen tests (docs/design.md §3.4): which base test files are put back, that the checkout returns to the
// maker's commit afterwards, and what a failing frozen run means. Real git for the checkout part.

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function write(dir: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  git(dir, 'add', '--all');
  git(dir, 'commit', '--quiet', '--allow-empty', '-m', 'change');
  return git(dir, 'rev-parse', 'HEAD').trim();
}

function scenario() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-tests-'));
  dirs.push(dir);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  const base = write(dir, {
    'src/price.js': 'bug',
    'test/price.test.js': 'expect(total(200)).toBe(180)',
    'test/other.test.js': 'other',
    'test/gone.test.js': 'gone',
  });
  git(dir, 'rm', '--quiet', 'test/gone.test.js');
  git(dir, 'mv', 'test/other.test.js', 'test/other.test.js.bak');
  const checkpoint = write(dir, {
    'test/price.test.js': 'expect(total(200)).toBeDefined()',
    'test/new.test.js': 'new',
    'src/price.js': 'still a bug',
  });
  return { dir, base, checkpoint };
}

test('the base test files the maker edited, deleted or renamed are the ones frozen; added ones are not', async () => {
  const { dir, base, checkpoint } = scenario();
  const frozen = await editedBaseTests(await loadChanges(dir, base, checkpoint), (file) => readAt(dir, base, file));
  expect(frozen.whole.sort()).toEqual(['test/gone.test.js', 'test/other.test.js', 'test/price.test.js']);
  expect(frozen.inline).toEqual([]);
});

test('the run sees the base versions; afterwards the checkout and its index are the maker’s commit again', async () => {
  const { dir, base, checkpoint } = scenario();
  const checkout = path.join(dir, '..', `${path.basename(dir)}-checkout`);
  dirs.push(checkout);
  git(dir, 'worktree', 'add', '--detach', '--quiet', checkout, checkpoint);
  const files = await editedBaseTests(await loadChanges(dir, base, checkpoint), (file) => readAt(dir, base, file));
  const seen = await withBaseVersions(checkout, base, checkpoint, files, async () => ({
    price: fs.readFileSync(path.join(checkout, 'test/price.test.js'), 'utf8'),
    gone: fs.existsSync(path.join(checkout, 'test/gone.test.js')),
    other: fs.existsSync(path.join(checkout, 'test/other.test.js')),
    source: fs.readFileSync(path.join(checkout, 'src/price.js'), 'utf8'),
  }));
  expect(seen).toEqual({ price: 'expect(total(200)).toBe(180)', gone: true, other: true, source: 'still a bug' });
  expect(fs.readFileSync(path.join(checkout, 'test/price.test.js'), 'utf8')).toBe('expect(total(200)).toBeDefined()');
  expect(fs.existsSync(path.join(checkout, 'test/gone.test.js'))).toBe(false);
  expect(fs.existsSync(path.join(checkout, 'test/other.test.js'))).toBe(false);
  expect(git(checkout, 'status', '--porcelain')).toBe('');
});

test('a symlink the maker put where a test file was is replaced for the run, its target untouched', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-tests-'));
  dirs.push(dir);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  const base = write(dir, { 'test/a.test.js': 'real test' });
  const outside = path.join(dir, '..', `${path.basename(dir)}-outside.txt`);
  dirs.push(outside);
  fs.writeFileSync(outside, 'outside');
  fs.rmSync(path.join(dir, 'test/a.test.js'));
  fs.symlinkSync(outside, path.join(dir, 'test/a.test.js'));
  const checkpoint = write(dir, {});
  const files = await editedBaseTests(await loadChanges(dir, base, checkpoint), (file) => readAt(dir, base, file));
  await withBaseVersions(dir, base, checkpoint, files, async () => {
    expect(fs.lstatSync(path.join(dir, 'test/a.test.js')).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'test/a.test.js'), 'utf8')).toBe('real test');
  });
  expect(fs.readFileSync(outside, 'utf8')).toBe('outside');
  expect(fs.lstatSync(path.join(dir, 'test/a.test.js')).isSymbolicLink()).toBe(true);
});

test('thousands of paths go back and forth, a mode and a deletion among them', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-tests-'));
  dirs.push(dir);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  const base = write(dir, { 'test/a.test.js': 'base test', 'bin/run': 'base' });
  const generated = Object.fromEntries(Array.from({ length: 2500 }, (_, i) => [`gen/${i}.js`, `${i}`]));
  fs.chmodSync(path.join(dir, 'bin/run'), 0o755);
  const checkpoint = write(dir, { ...generated, 'test/a.test.js': 'maker test' });
  const paths = [...Object.keys(generated), 'test/a.test.js', 'bin/run'];
  const seen = await withBaseVersions(dir, base, checkpoint, { whole: paths, inline: [] }, async () => ({
    test: fs.readFileSync(path.join(dir, 'test/a.test.js'), 'utf8'),
    generated: fs.readdirSync(path.join(dir, 'gen')).length,
    executable: (fs.statSync(path.join(dir, 'bin/run')).mode & 0o111) !== 0,
  }));
  expect(seen).toEqual({ test: 'base test', generated: 0, executable: false });
  expect(fs.readFileSync(path.join(dir, 'test/a.test.js'), 'utf8')).toBe('maker test');
  expect(fs.readdirSync(path.join(dir, 'gen')).length).toBe(2500);
  expect(fs.statSync(path.join(dir, 'bin/run')).mode & 0o111).not.toBe(0);
  expect(git(dir, 'status', '--porcelain')).toBe('');
});

test('a path to delete under a symlinked directory is left alone: what is deleted is in the checkout', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-tests-'));
  dirs.push(dir);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  const base = write(dir, { 'test/a.test.js': 'base test' });
  const checkpoint = write(dir, { 'gen/f.txt': 'maker' });
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-tests-outside-'));
  dirs.push(outside);
  fs.writeFileSync(path.join(outside, 'f.txt'), 'outside');
  fs.rmSync(path.join(dir, 'gen'), { recursive: true });
  fs.symlinkSync(outside, path.join(dir, 'gen'));
  await withBaseVersions(dir, base, checkpoint, { whole: ['gen/f.txt'], inline: [] }, async () => undefined);
  expect(fs.readFileSync(path.join(outside, 'f.txt'), 'utf8')).toBe('outside');
});

const report = (passed: string[], failed: string[], skipped = 0): TestReport => ({
  runner: 'jest',
  passed: passed.length,
  failed: failed.length,
  skipped,
  passedTests: passed,
  failedTests: failed,
});
const run = (r: TestReport | null, failureReason: string | null = null): TestsRun => ({
  report: r,
  failureReason,
  outputTail: 'FAIL test/price.test.js',
});
const BASE_TEXT =
  "const { total } = require('../src/price');\n\ntest('applies the discount', () => {\n  expect(total(200)).toBe(180);\n});\n";

describe('frozenTestFindings', () => {
  const files = ['test/price.test.js'];
  const maker = run(report(['test/price.test.js > applies the discount'], []));

  test('a test that fails in its base version is TEST_WEAKENED at the line declaring it', () => {
    const frozen = run(report([], ['test/price.test.js > applies the discount']), '1 test failed');
    const findings = frozenTestFindings(files, maker, frozen, () => BASE_TEXT);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'TEST_WEAKENED',
        location: { file: 'test/price.test.js', startLine: 3, endLine: 3 },
        evidence: expect.stringContaining('- test/price.test.js > applies the discount'),
      }),
    ]);
  });

  test('without test names the finding quotes the run’s failure and output', () => {
    const findings = frozenTestFindings(files, maker, run(null, 'exit code 1'), () => BASE_TEXT);
    expect(findings).toEqual([
      expect.objectContaining({ rule: 'TEST_WEAKENED', evidence: expect.stringContaining('exit code 1') }),
    ]);
    expect(findings[0]!.evidence).toContain('FAIL test/price.test.js');
  });

  test('fewer tests run with the maker’s files than with the base ones is FEWER_TESTS_RUN with both counts', () => {
    const frozen = run(report(['a', 'b', 'c', 'd'], []));
    const findings = frozenTestFindings(files, run(report(['a'], [], 3)), frozen, () => BASE_TEXT);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'FEWER_TESTS_RUN',
        evidence: expect.stringMatching(
          /ran 1 test\(s\) with the maker's test files \(3 skipped\) and 4 with the base versions/,
        ),
      }),
    ]);
  });

  test('an honest edit — the base tests still pass, as many run — raises nothing; nor do tests failing in both runs', () => {
    expect(
      frozenTestFindings(files, run(report(['a', 'b', 'new'], [])), run(report(['a', 'b'], [])), () => BASE_TEXT),
    ).toEqual([]);
    expect(
      frozenTestFindings(files, run(report([], ['a']), 'failed'), run(report([], ['a']), 'failed'), () => BASE_TEXT),
    ).toEqual([]);
  });

  test("a weakened test is kept when the maker's own run failed elsewhere, located in the file that declares it", () => {
    const weakened = 'tests::applies_the_discount';
    const maker = run(report([weakened], ['tests::other']), '1 test failed');
    const frozen = run(report([], [weakened, 'tests::other']), '2 tests failed');
    const texts: Record<string, string> = {
      'src/other.rs': 'fn other() {}\n',
      'src/lib.rs':
        'pub fn total() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn applies_the_discount() {}\n}\n',
    };
    const findings = frozenTestFindings(['src/other.rs', 'src/lib.rs'], maker, frozen, (file) => texts[file] ?? null);
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'TEST_WEAKENED',
        location: { file: 'src/lib.rs', startLine: 6, endLine: 6 },
        evidence: expect.not.stringContaining('tests::other'),
      }),
    ]);
  });
});

describe('triage counter-evidence must quote the code it was shown', () => {
  const shown =
    '### Code at the checkpoint\n```\n1: exports.sum = (a, b) => a + b;\n```\n### Diff\n```diff\n+exports.sum = (a, b) => a + b;\n```';
  test('a quoted line (line-number prefix and spacing aside) counts', () => {
    expect(quotesShownCode('1: exports.sum = (a, b) => a + b;', shown)).toBe(true);
    expect(quotesShownCode('`exports.sum  =  (a, b) => a + b;`', shown)).toBe(true);
  });
  test('an invented line, a paraphrase or a fragment too short to prove anything does not', () => {
    expect(quotesShownCode('exports.sum = (a, b) => Number(a) + Number(b);', shown)).toBe(false);
    expect(quotesShownCode('the function adds both arguments', shown)).toBe(false);
    expect(quotesShownCode('a + b', shown)).toBe(false);
  });
});

describe('the frozen tests the reviewer reads', () => {
  test('edited test files first, then base tests naming an acceptance test or a changed source file; others left out', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-review-'));
    dirs.push(dir);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    const base = write(dir, {
      'src/price.js': 'bug',
      'test/edited.test.js': 'edited at base',
      'test/named.test.js': "test('applies the discount', () => {})",
      'test/uses-price.test.js': "require('../src/price')",
      'test/unrelated.test.js': "require('../src/other')",
    });
    const contract = goalContractSchema.parse({
      ...loopRequest('/repo', ['agent']).contract,
      acceptanceCriteria: [
        { id: 'AC-1', statement: 's', verification: { type: 'test', name: 'applies the discount' } },
      ],
    });
    const changes = [
      { basePath: 'test/edited.test.js', checkpointPath: 'test/edited.test.js' },
      { basePath: 'src/price.js', checkpointPath: 'src/price.js' },
      { basePath: null, checkpointPath: 'test/new.test.js' },
    ];
    const shown = await frozenTestsForReview(dir, base, changes, contract);
    expect(shown).toEqual([
      { file: 'test/edited.test.js', text: 'edited at base' },
      { file: 'test/named.test.js', text: "test('applies the discount', () => {})" },
      { file: 'test/uses-price.test.js', text: "require('../src/price')" },
    ]);
  });
});

describe("Rust's inline tests in the frozen run", () => {
  const BASE = [
    'pub fn total(amount: u32) -> u32 {',
    '    amount',
    '}',
    '',
    '#[cfg(test)]',
    'mod tests {',
    '    use super::*;',
    '    #[test]',
    '    fn takes_ten_percent_off() {',
    '        let s = "}"; // a brace in a string: } {',
    '        assert_eq!(total(200), 180);',
    '    }',
    '}',
    '',
  ].join('\n');
  const FIX = 'pub fn total(amount: u32) -> u32 {\n    if amount >= 100 { amount - amount / 10 } else { amount }\n}\n';

  test("the maker's code with the base test module in place of the maker's, whatever the maker did to it", () => {
    const baseModule = BASE.slice(BASE.indexOf('#[cfg(test)]')).trimEnd();
    const disabled = `${FIX}\n#[cfg(any())]\nmod tests {\n    #[test]\n    fn takes_ten_percent_off() {}\n}\n\n#[cfg(test)]\nmod tests {}\n`;
    const panicking =
      FIX + BASE.slice(BASE.indexOf('#[cfg(test)]')).replace('    #[test]\n', '    #[test]\n    #[should_panic]\n');
    for (const maker of [disabled, panicking, FIX])
      expect(withBaseTestModules(BASE, maker)).toBe(`${FIX.trimEnd()}\n\n${baseModule}\n`);
    // Other modules of the maker's stay.
    const withHelpers = `${FIX}\nmod helpers {\n    pub fn f() {}\n}\n`;
    expect(withBaseTestModules(BASE, withHelpers)).toBe(`${withHelpers.trimEnd()}\n\n${baseModule}\n`);
  });

  test('editedBaseTests splices a changed Rust source file with tests; the run sees the base tests on the maker code', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-inline-'));
    dirs.push(dir);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    const base = write(dir, { 'src/lib.rs': BASE, 'src/util.rs': 'pub fn f() {}\n' });
    const weakened = FIX + BASE.slice(BASE.indexOf('#[cfg(test)]')).replace('180', '200');
    const checkpoint = write(dir, { 'src/lib.rs': weakened, 'src/util.rs': 'pub fn g() {}\n' });
    const files = await editedBaseTests(await loadChanges(dir, base, checkpoint), (file) => readAt(dir, base, file));
    expect(files).toEqual({ whole: [], inline: ['src/lib.rs'] });
    const seen = await withBaseVersions(dir, base, checkpoint, files, async () =>
      fs.readFileSync(path.join(dir, 'src/lib.rs'), 'utf8'),
    );
    expect(seen).toContain('if amount >= 100');
    expect(seen).toContain('assert_eq!(total(200), 180);');
    expect(fs.readFileSync(path.join(dir, 'src/lib.rs'), 'utf8')).toBe(weakened);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });
});
