import { buildReviewMessages, type ReviewContext } from '../../activities/review/review-prompt';
import { goalContractSchema } from '../../domain/contract';
import { loopRequest } from '../support/loop-request';

// What the reviewer is told about a change that touches manifests or lockfiles: set-up installs from them
// before the gates run, so a new or upgraded dependency gets a look of its own.

const context = (
  dependencyChanges: string[],
  frozenTests: ReviewContext['frozenTests'] = [],
  allowTestChanges = false,
): ReviewContext => ({
  frozen: {
    version: 1,
    hash: 'h',
    contract: goalContractSchema.parse({ ...loopRequest('/repo', ['agent']).contract, allowTestChanges }),
  },
  diff: '+exports.sum = (a, b) => a + b;',
  diffTruncated: false,
  verificationSummary: ['- tests: PASSED (exit code 0)'],
  priorSignatures: [],
  focusTopics: ['correctness'],
  dependencyChanges,
  frozenTests,
});

test('dependency changes are named to the reviewer, with what to check', () => {
  const user = buildReviewMessages(context(['package.json', 'package-lock.json']))[1]!.content;
  expect(user).toContain('# Dependency changes: package.json, package-lock.json');
  expect(user).toContain('Check that every added, removed or upgraded dependency is needed by the contract');
});

test('a change without dependency changes says nothing about them', () => {
  expect(buildReviewMessages(context([]))[1]!.content).not.toContain('Dependency changes');
});

test('the frozen tests are shown with the ask to look for special-casing; allowed test changes are named as such', () => {
  const frozenTests = [
    { file: 'test/sum.test.js', text: "test('sum adds two numbers', () => assert.equal(sum(2, 3), 5));" },
  ];
  const [system, user] = buildReviewMessages(context([], frozenTests)).map((m) => m.content);
  expect(system).toContain('special-cases the tests is a BLOCKER');
  expect(user).toContain(
    '# Frozen tests (their versions at the base commit)\nThe contract does not allow changing these tests',
  );
  expect(user).toContain("## test/sum.test.js\n```\ntest('sum adds two numbers'");
  const allowed = buildReviewMessages(context([], frozenTests, true))[1]!.content;
  expect(allowed).toContain(
    'The contract allows changing tests: every change the diff makes to these files is a changed test.',
  );
  expect(buildReviewMessages(context([]))[1]!.content).not.toContain('# Frozen tests');
});
