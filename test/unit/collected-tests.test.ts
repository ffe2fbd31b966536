import { collectedTestFiles } from '../../analysis/verification/collected-test-files';
import { collectedTestsTampering } from '../../activities/verification/collected-tests-tamper';
import { editedBaseTests } from '../../activities/verification/frozen-tests';
import { loadChanges } from '../../activities/tamper/change-set';
import { detectTampering } from '../../activities/tamper/detect-tampering';
import { tamperInput } from '../../activities/inspect-changes';
import type { GoalContract } from '../../domain/contract';
import { lines, located, removeTamperRepos, tamper, tamperRepo, type Change } from '../support/tamper-repo';

// Test files as the runner collects them (issue 27, item 2): a mocha `spec/` directory no path glob
// names is product code to the maker activity's check; once the base run's report names tests in it,
// verification freezes it and runs the test-file rules over it.

afterAll(removeTamperRepos);

const SPEC = lines(
  "const assert = require('node:assert/strict');",
  "const { total } = require('../src/price');",
  '',
  "describe('total', () => {",
  "  it('takes 10% off from 100 up', () => {",
  '    assert.equal(total(200), 180);',
  '  });',
  '});',
);
const BASE = { 'src/price.js': 'exports.total = (n) => n;\n', 'spec/price.js': SPEC };
const WEAKENED: Change = {
  write: { 'spec/price.js': SPEC.replace('assert.equal(total(200), 180);', 'assert.ok(total(200));') },
};

describe('collectedTestFiles', () => {
  test('the file part of each name, once; names without a source file give none', () => {
    expect(
      collectedTestFiles([
        'spec/price.js > total > takes 10% off',
        'spec/price.js > total > other',
        'checks/check_sum.py::TestSum::test_adds',
        'TestTotal',
        'example.com/shop > TestTotal',
        'tests::adds',
        '../outside.js > x',
        '/etc/passwd.js > x',
      ]),
    ).toEqual(['spec/price.js', 'checks/check_sum.py']);
  });
});

describe('the tamper rules on collected test files', () => {
  test('a weakened assertion in spec/ fires only once the file is known as collected', async () => {
    expect(located(await tamper(BASE, WEAKENED))).toEqual([]);
    expect(located(await tamper(BASE, WEAKENED, { collectedTests: ['spec/price.js'] }))).toEqual([
      ['TESTS_WEAKENED', 'spec/price.js', 6],
    ]);
  });

  const contract = { scope: undefined, outOfScope: [], acceptanceCriteria: [] } as unknown as GoalContract;

  test('verification keeps only what the runner’s view adds, not what the first check already found', async () => {
    const { dir, base, checkpoint } = tamperRepo(BASE, {
      write: {
        'spec/price.js': `${WEAKENED.write!['spec/price.js']}// eslint-disable-next-line\n`,
      },
    });
    const at = { workspace: dir, baseCommit: base, checkpointCommit: checkpoint, gates: [], contract };
    const changes = await loadChanges(dir, base, checkpoint);
    // SUPPRESSION_ADDED fires either way: the maker activity stored it already.
    const first = await detectTampering(tamperInput(at));
    expect(located(first)).toEqual([['SUPPRESSION_ADDED', 'spec/price.js', 9]]);
    const stored = async () => first;
    expect(located(await collectedTestsTampering(at, new Set(['spec/price.js']), changes, stored))).toEqual([
      ['TESTS_WEAKENED', 'spec/price.js', 6],
    ]);
    expect(await collectedTestsTampering(at, new Set(['src/price.js', 'spec/other.js']), changes, stored)).toEqual([]);
  });

  test('the frozen run puts a collected file back, as it does a test file', async () => {
    const { dir, base, checkpoint } = tamperRepo(BASE, WEAKENED);
    const changes = await loadChanges(dir, base, checkpoint);
    const readBase = async () => SPEC;
    expect(await editedBaseTests(changes, readBase)).toEqual({ whole: [], inline: [] });
    expect(await editedBaseTests(changes, readBase, new Set(['spec/price.js']))).toEqual({
      whole: ['spec/price.js'],
      inline: [],
    });
  });
});
