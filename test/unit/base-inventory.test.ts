import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { baseTestsRun, inventoryOf } from '../../activities/verification/base-run';
import { withBaseVersions } from '../../activities/verification/frozen-tests';
import type { TestsGateRun, VerificationRunner } from '../../activities/verification/verification-runner';
import { loadChanges } from '../../activities/tamper/change-set';
import {
  acceptanceTestsFirst,
  baseInventoryFindings,
  type BaseInventory,
} from '../../analysis/verification/base-inventory';
import { provenBy } from '../../analysis/verification/proven-criteria';
import type { AcceptanceCriterion } from '../../domain/contract';
import type { ResolvedGate } from '../../domain/gates';
import type { TestReport } from '../../analysis/test-reports';
import { git } from '../support/test-git';

// The base inventory (docs/design.md §3.4): the tests gate's report on the base commit's tree. Proof by a
// named test goes through it, fewer tests than it ran is a finding, and the base run sees the base tree
// with the gate entrypoints left as the checkout holds them. Real git for the checkout part.

const criterion = (name: string): AcceptanceCriterion =>
  ({ id: 'AC-1', statement: 'totals', verification: { type: 'test', name } }) as AcceptanceCriterion;

const report = (passedTests: string[], failedTests: string[] = [], skipped = 0): TestReport => ({
  runner: 'jest',
  passed: passedTests.length,
  failed: failedTests.length,
  skipped,
  passedTests,
  failedTests,
});

const inventory = (names: string[], skipped = 0): BaseInventory => ({ names, ran: names.length, skipped });

describe('proof by a named test', () => {
  const base = inventory(['test/cart.test.js > total > adds tax', 'test/util.test.js > rounds']);

  test('a name picking out one base test is proven by that test alone, not by a same-named one elsewhere', () => {
    const ac = [criterion('adds tax')];
    expect(provenBy('tests', report(['test/other.test.js > adds tax']), ac, base)).toEqual([]);
    expect(provenBy('tests', report(['test/cart.test.js > total > adds tax']), ac, base)).toEqual(['AC-1']);
  });

  test('the reported name is compared in its stored form', () => {
    const stored = (name: string) => name.replace('SECRET', '[REDACTED]');
    const base = inventory(['test/[REDACTED]/cart.test.js > adds tax']);
    const passed = report(['test/SECRET/cart.test.js > adds tax']);
    expect(provenBy('tests', passed, [criterion('adds tax')], base, stored)).toEqual(['AC-1']);
    expect(provenBy('tests', passed, [criterion('adds tax')], base)).toEqual([]);
  });

  test('a name picking out several base tests proves nothing; qualified, it picks one', () => {
    const base = inventory(['test/a.test.js > adds tax', 'test/b.test.js > adds tax']);
    const passed = report(['test/a.test.js > adds tax', 'test/b.test.js > adds tax']);
    expect(provenBy('tests', passed, [criterion('adds tax')], base)).toEqual([]);
    expect(provenBy('tests', passed, [criterion('test/b.test.js > adds tax')], base)).toEqual(['AC-1']);
  });

  test('a name the base does not have (a test the maker adds) is proven by name, as without an inventory', () => {
    const passed = report(['test/new.test.js > handles refunds']);
    expect(provenBy('tests', passed, [criterion('handles refunds')], base)).toEqual(['AC-1']);
    expect(provenBy('tests', passed, [criterion('handles refunds')], null)).toEqual(['AC-1']);
    expect(provenBy('lint', passed, [criterion('handles refunds')], base)).toEqual([]);
  });
});

describe('findings from the base inventory', () => {
  const at = (file: string, line: number) => (name: string) => (name.startsWith(file) ? { file, line } : null);
  const passing = (r: TestReport) => ({ failureReason: null, report: r });

  test('an acceptance test naming several base tests is ACCEPTANCE_TEST_AMBIGUOUS, listing them, at the first', () => {
    const base = inventory(['test/a.test.js > adds tax', 'test/b.test.js > adds tax', 'test/c.test.js > x']);
    const findings = baseInventoryFindings(
      ['adds tax'],
      base,
      passing(report(base.names)),
      at('test/b.test.js', 7),
      false,
    );
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'ACCEPTANCE_TEST_AMBIGUOUS',
        location: { file: 'test/b.test.js', startLine: 7, endLine: 7 },
        evidence: expect.stringContaining('- test/a.test.js > adds tax\n- test/b.test.js > adds tax'),
      }),
    ]);
  });

  test('a passing run with fewer tests than the base is FEWER_TESTS_RUN, at a test that no longer ran', () => {
    const base = inventory(['test/a.test.js > one', 'test/b.test.js > two', 'test/b.test.js > three'], 1);
    const findings = baseInventoryFindings(
      [],
      base,
      passing(report(['test/a.test.js > one'])),
      at('test/b.test.js', 3),
      false,
    );
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'FEWER_TESTS_RUN',
        location: { file: 'test/b.test.js', startLine: 3, endLine: 3 },
        evidence: expect.stringMatching(
          /jest ran 1 test\(s\) on the maker's change \(0 skipped\) and 3 on the base commit \(1 skipped\)\.[^]*- test\/b\.test\.js > two\n- test\/b\.test\.js > three/,
        ),
      }),
    ]);
  });

  test('no count finding when the maker’s run failed, the frozen run found it, or as many ran', () => {
    const base = inventory(['test/a.test.js > one', 'test/a.test.js > two']);
    const fewer = report(['test/a.test.js > one']);
    const none = () => null;
    expect(baseInventoryFindings([], base, { failureReason: 'exit 1', report: fewer }, none, false)).toEqual([]);
    expect(baseInventoryFindings([], base, passing(fewer), none, true)).toEqual([]);
    expect(baseInventoryFindings([], base, passing(report(['x', 'y'])), none, false)).toEqual([]);
    expect(baseInventoryFindings(['one'], base, null, none, false)).toEqual([]);
  });

  test('the names an acceptance test picks out go first, so a capped copy keeps them', () => {
    expect(acceptanceTestsFirst(['a > one', 'b > adds tax', 'c > two'], ['adds tax'])).toEqual([
      'b > adds tax',
      'a > one',
      'c > two',
    ]);
  });

  test('the inventory reads the evidence row; without counts there is none', () => {
    const row = { testCounts: { passed: 1, failed: 2, skipped: 3 }, passedTests: ['p'], failedTests: ['f', 'g'] };
    expect(inventoryOf(row)).toEqual({ names: ['p', 'f', 'g'], ran: 3, skipped: 3 });
    expect(inventoryOf({ ...row, testCounts: null })).toBeNull();
  });
});

describe('the base run', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  function commit(dir: string, files: Record<string, string | null>): string {
    for (const [file, text] of Object.entries(files)) {
      if (text === null) fs.rmSync(path.join(dir, file));
      else {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
    }
    git(dir, 'add', '--all');
    git(dir, 'commit', '--quiet', '-m', 'change');
    return git(dir, 'rev-parse', 'HEAD').trim();
  }

  test('runs on the base tree, entrypoints as the checkout holds them, then the checkout is the checkpoint again', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'base-run-'));
    dirs.push(dir);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    const base = commit(dir, {
      'src/cart.js': 'base',
      'test/cart.test.js': 'base test',
      'jest.config.js': 'base',
      'package.json': 'base',
    });
    const checkpoint = commit(dir, {
      'src/cart.js': 'maker',
      'src/new.js': 'added',
      'test/cart.test.js': null,
      'jest.config.js': 'maker',
      'package.json': 'maker',
    });
    const checkout = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'base-run-checkout-')), 'c');
    dirs.push(path.dirname(checkout));
    git(dir, 'worktree', 'add', '--detach', '--quiet', checkout, checkpoint);
    // As verification leaves it: the entrypoint at base, which the run must not then put back to the maker's.
    fs.writeFileSync(path.join(checkout, 'jest.config.js'), 'base, restored');
    fs.writeFileSync(path.join(checkout, 'package.json'), 'maker, its jest key at base');
    const read = (file: string) =>
      fs.existsSync(path.join(checkout, file)) ? fs.readFileSync(path.join(checkout, file), 'utf8') : null;
    let seen: Record<string, string | null> = {};
    const runner = {
      runTests: async () => {
        seen = Object.fromEntries(
          ['src/cart.js', 'src/new.js', 'test/cart.test.js', 'jest.config.js', 'package.json'].map((f) => [f, read(f)]),
        );
        return {
          report: report(['test/x.test.js > other', 'test/cart.test.js > adds tax']),
          counts: { passed: 2, failed: 0, skipped: 0 },
        } as unknown as TestsGateRun;
      },
    } as unknown as VerificationRunner;
    const ran = await baseTestsRun(runner, checkout, { base, checkpoint }, {} as ResolvedGate, {
      paths: await loadChanges(dir, base, checkpoint),
      alreadyBase: ['jest.config.js', 'package.json#jest.testTimeout'],
      acceptanceTests: ['adds tax'],
    });
    expect(seen).toEqual({
      'src/cart.js': 'base',
      'src/new.js': null,
      'test/cart.test.js': 'base test',
      'jest.config.js': 'base, restored',
      'package.json': 'maker, its jest key at base',
    });
    expect(ran.report?.passedTests).toEqual(['test/cart.test.js > adds tax', 'test/x.test.js > other']);
    expect([read('src/cart.js'), read('src/new.js'), read('test/cart.test.js')]).toEqual(['maker', 'added', null]);
    expect(read('jest.config.js')).toBe('base, restored');
    expect(read('package.json')).toBe('maker, its jest key at base');
  });

  test('with nothing to put back (a maker that changed nothing), the run runs as the checkout is', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'base-run-none-'));
    dirs.push(dir);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    const base = commit(dir, { 'src/cart.js': 'base' });
    expect(await withBaseVersions(dir, base, base, { whole: [], inline: [] }, async () => 'ran')).toBe('ran');
  });

  test('Python bytecode of the files put back is removed, so a same-size version within the second never runs stale', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'base-run-py-'));
    dirs.push(dir);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    const base = commit(dir, { 'pkg/cart.py': 'X = 1\n' });
    const checkpoint = commit(dir, { 'pkg/cart.py': 'X = 2\n' });
    const cache = path.join(dir, 'pkg', '__pycache__');
    await withBaseVersions(dir, base, checkpoint, { whole: ['pkg/cart.py'], inline: [] }, async () => {
      fs.mkdirSync(cache);
      for (const file of ['cart.cpython-311.pyc', 'cart.cpython-311-pytest-8.3.3.pyc', 'other.cpython-311.pyc'])
        fs.writeFileSync(path.join(cache, file), 'bytecode');
    });
    expect(fs.readdirSync(cache)).toEqual(['other.cpython-311.pyc']);
    expect(fs.readFileSync(path.join(dir, 'pkg/cart.py'), 'utf8')).toBe('X = 2\n');
  });
});
