import { buildReviewMessages, type ReviewContext } from '../../activities/review/review-prompt';
import { goalContractSchema } from '../../domain/contract';
import { loopRequest } from '../support/loop-request';

// What the reviewer is told about a change that touches manifests or lockfiles: set-up installs from them
// before the gates run, so a new or upgraded dependency gets a look of its own.

const context = (dependencyChanges: string[]): ReviewContext => ({
  frozen: { version: 1, hash: 'h', contract: goalContractSchema.parse(loopRequest('/repo', ['agent']).contract) },
  diff: '+exports.sum = (a, b) => a + b;',
  diffTruncated: false,
  verificationSummary: ['- tests: PASSED (exit code 0)'],
  priorSignatures: [],
  focusTopics: ['correctness'],
  dependencyChanges,
});

test('dependency changes are named to the reviewer, with what to check', () => {
  const user = buildReviewMessages(context(['package.json', 'package-lock.json']))[1]!.content;
  expect(user).toContain('# Dependency changes: package.json, package-lock.json');
  expect(user).toContain('Check that every added, removed or upgraded dependency is needed by the contract');
});

test('a change without dependency changes says nothing about them', () => {
  expect(buildReviewMessages(context([]))[1]!.content).not.toContain('Dependency changes');
});
