import { isWorse, recoveryBrief, type IterationScore } from '../../domain/backtrack';

const score = (failedGates: number, blockingFindings: number, sequence = 1): IterationScore => ({
  sequence,
  checkpointCommit: `commit-${sequence}-0123456789`,
  failedGates,
  blockingFindings,
  changedFiles: ['src/sum.js'],
});

describe('backtracking', () => {
  test.each([
    [score(1, 0), score(0, 3), true],
    [score(0, 2), score(0, 1), true],
    [score(0, 1), score(0, 1), false],
    [score(0, 0), score(1, 0), false],
    [score(1, 5), score(1, 5), false],
  ])('%o worse than %o → %s', (current, best, worse) => {
    expect(isWorse(current, best)).toBe(worse);
  });

  test('the recovery brief names what was undone and where the workspace went back to', () => {
    expect(recoveryBrief(score(1, 0, 3), score(0, 1, 2))).toBe(
      "Recovery: iteration #3 was worse than #2 (1 failing gate(s) and 0 blocking finding(s) against 0 and 1), so the workspace was reset to checkpoint commit-2-012. Do not repeat that attempt's approach (it changed src/sum.js); address the directives from that checkpoint.",
    );
  });
});
