import { ApplicationFailure } from '@temporalio/common';
import { loopInput } from './support/loop-input';
import {
  checkpointOf,
  failedGate,
  gateFailed,
  made,
  reviewed,
  reviewerBlocker,
  verified,
} from './support/loop-results';
import { loopTestEnvironment } from './support/test-environment';

// The loop's iterations (maker → verify → review → judge) until a PASS, or until the judge escalates.

const loops = loopTestEnvironment();

test('a first iteration that passes is delivered', async () => {
  const input = loopInput();
  await loops.run({ iterations: [{}] }, input, async ({ handle, activities, state }) => {
    await expect(handle.result()).resolves.toEqual({
      status: 'PASSED',
      iterations: 1,
      reportId: `report-final-${input.loopId}`,
    });

    expect(activities.calls.map((c) => c.activity)).toEqual([
      'prepareWorkspace',
      'freezeContract',
      // The contract's test name is resolved against the base commit's tests before the first maker.
      'resolveAcceptanceTests',
      // The maker's activity verified its checkpoint, and reviewed it: it passed every gate.
      'runMaker',
      'recordVerdict',
      // Nothing stands in the way of the passed change: the preparation's activity delivers it.
      'prepareDelivery',
    ]);
    expect(activities.verifications).toEqual([{ sequence: 1, by: 'runMaker' }]);
    expect(activities.reviews).toEqual([{ sequence: 1, by: 'runMaker' }]);
    const maker = activities.inputsOf('runMaker')[0]!;
    expect(maker.verify).toMatchObject({
      progress: { phase: 'VERIFY', status: 'RUNNING' },
      review: { reviewer: input.request.reviewer, progress: { phase: 'REVIEW', status: 'RUNNING' } },
      budget: input.request.budget,
      usageBefore: { tokens: 0, costUsd: 0, agentMs: 0 },
    });
    // Numbered in the order they happen (MAKER, VERIFY, REVIEW, JUDGE): the read model takes moves in order.
    const judged = activities.inputsOf('recordVerdict')[0]!.progress;
    expect(maker.verify!.progress.move).toBe(maker.progress.move + 1);
    expect(maker.verify!.review.progress.move).toBe(maker.progress.move + 2);
    expect(judged.move).toBe(maker.progress.move + 3);
    expect(activities.inputsOf('prepareWorkspace')[0]).toMatchObject({
      loopId: input.loopId,
      repository: input.request.repository,
      contractGates: input.request.gates,
    });
    expect(activities.inputsOf('freezeContract')[0]).toMatchObject({
      version: 1,
      reason: 'submitted',
      contract: input.request.contract,
      progress: { status: 'RUNNING', phase: 'CONTRACT' },
    });
    expect(activities.inputsOf('runMaker')[0]).toMatchObject({
      sequence: 1,
      roundIteration: 1,
      maxIterations: 3,
      contractVersion: 1,
      directives: [],
      maker: input.request.maker,
    });
    expect(activities.inputsOf('recordVerdict')[0]!.report).toMatchObject({
      verdict: 'PASS',
      rule: 'ALL_CLEAR',
      trigger: null,
    });
    const [prepared] = activities.inputsOf('prepareDelivery');
    expect(prepared!.deliverWhenClear!.ended).toMatchObject({ status: 'PASSED', phase: 'DONE' });
    // The end is numbered after the verdict's move: the read model takes moves in order.
    expect(prepared!.deliverWhenClear!.ended.move).toBeGreaterThan(judged.move);
    expect(activities.delivered).toEqual([
      {
        loopId: input.loopId,
        sequence: 1,
        outcome: 'PASSED',
        approvedBy: null,
        ended: expect.objectContaining({ status: 'PASSED', phase: 'DONE' }),
        by: 'prepareDelivery',
      },
    ]);
    expect(await state()).toMatchObject({
      status: 'PASSED',
      phase: 'DONE',
      contractVersion: 1,
      sequence: 1,
      lastVerdict: 'PASS',
      awaitingDecision: null,
      iterations: [
        {
          sequence: 1,
          roundIteration: 1,
          contractVersion: 1,
          checkpointCommit: checkpointOf(1),
          verdict: 'PASS',
          trigger: null,
        },
      ],
    });
  });
});

test("a failing gate sends the maker back with the judge's directive, and the next iteration passes", async () => {
  await loops.run(
    { iterations: [{ verification: gateFailed(1, 'sum adds two numbers: expected 3, got -1') }, {}] },
    loopInput(),
    async ({ handle, activities, state }) => {
      await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });

      // A failed gate skips the review: there is nothing worth reviewing yet.
      expect(activities.calls.map((c) => c.activity)).toEqual([
        'prepareWorkspace',
        'freezeContract',
        'resolveAcceptanceTests',
        'runMaker',
        'recordVerdict',
        'runMaker',
        'recordVerdict',
        'prepareDelivery',
      ]);
      expect(activities.reviews).toEqual([{ sequence: 2, by: 'runMaker' }]);
      expect(activities.inputsOf('recordVerdict').map((v) => [v.report.verdict, v.report.rule])).toEqual([
        ['ITERATE', 'GATES_FAILED'],
        ['PASS', 'ALL_CLEAR'],
      ]);
      expect(activities.inputsOf('runMaker')[1]).toMatchObject({
        sequence: 2,
        roundIteration: 2,
        directives: ['1. Fix the failing tests gate: sum adds two numbers: expected 3, got -1.'],
      });
      expect((await state()).iterations.map((i) => i.verdict)).toEqual(['ITERATE', 'PASS']);
    },
  );
});

test('an iteration worse than the best of its round is backtracked, with a recovery brief for the maker', async () => {
  const script = {
    iterations: [
      { verification: gateFailed(1, 'sum adds two numbers: expected 3, got -1') },
      // Two gates failing where #1 had one: worse.
      {
        maker: { changedFiles: ['src/sum.js', 'src/index.js'] },
        verification: gateFailed(2, 'sum adds two numbers: expected 3, got NaN', [
          failedGate('lint', 2, 'src/index.js: no-unused-vars'),
        ]),
      },
      {},
    ],
  };
  await loops.run(script, loopInput(), async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 3 });

    expect(activities.inputsOf('backtrack')).toEqual([
      { loopId: expect.any(String), sequence: 2, toCommit: checkpointOf(1) },
    ]);
    const order = activities.calls.map((c) => c.activity);
    expect(order.slice(order.indexOf('backtrack') - 1, order.indexOf('backtrack') + 2)).toEqual([
      'recordVerdict',
      'backtrack',
      'runMaker',
    ]);
    const third = activities.inputsOf('runMaker')[2]!;
    expect(third.directives).toEqual([
      '1. Fix the failing tests gate: sum adds two numbers: expected 3, got NaN.',
      '2. Fix the failing lint gate: src/index.js: no-unused-vars.',
      expect.stringMatching(
        /^3\. Recovery: iteration #2 was worse than #1 \(2 failing gate\(s\) and 0 blocking finding\(s\) against 1 and 0\), so the workspace was reset to checkpoint [0-9a-f]{12}\./,
      ),
    ]);
    expect(third.directives[2]).toContain(checkpointOf(1).slice(0, 12));
  });
});

test('an iteration no worse than the best is not backtracked', async () => {
  const script = {
    iterations: [
      { verification: gateFailed(1, 'expected 3, got -1') },
      { verification: gateFailed(2, 'expected 3, got 1') },
      {},
    ],
  };
  await loops.run(script, loopInput(), async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 3 });
    expect(activities.inputsOf('backtrack')).toEqual([]);
    expect(activities.inputsOf('runMaker')[2]!.directives).toEqual([
      '1. Fix the failing tests gate: expected 3, got 1.',
    ]);
  });
});

test('a spent budget skips the review and escalates as BUDGET_EXHAUSTED', async () => {
  const input = loopInput({ budget: { maxTokens: 10_000 } });
  const script = { iterations: [{ maker: { usage: { tokens: 12_500, costUsd: 0.03, agentMs: 60_000 } } }] };
  await loops.run(script, input, async ({ activities, awaitingDecision, state }) => {
    await awaitingDecision();

    // The maker's activity verified, and did not review: the maker's usage spent the budget.
    expect(activities.verifications).toEqual([{ sequence: 1, by: 'runMaker' }]);
    expect(activities.reviews).toEqual([]);
    const { report } = activities.inputsOf('recordVerdict')[0]!;
    expect(report).toMatchObject({ verdict: 'ESCALATE', trigger: 'BUDGET_EXHAUSTED', rule: 'BUDGET_EXHAUSTED' });
    expect(report.reasons).toEqual([
      'review unavailable: token budget reached: 12500 of 10000 tokens used',
      'token budget reached: 12500 of 10000 tokens used',
    ]);
    expect(activities.inputsOf('recordEscalation')).toEqual([
      { loopId: input.loopId, escalationSequence: 1, sequence: 1, report },
    ]);
    expect(await state()).toMatchObject({
      status: 'AWAITING_DECISION',
      phase: 'AWAITING_DECISION',
      awaitingDecision: { escalationSequence: 1, trigger: 'BUDGET_EXHAUSTED' },
    });
  });
});

test("the review's usage counts against the budget: the next iteration escalates before its review", async () => {
  const input = loopInput({ budget: { maxTokens: 2_000 } });
  // #1: the review (1,800 tokens) finds a blocker; #2's maker pushes the total past 2,000.
  const script = {
    iterations: [
      { review: reviewed([reviewerBlocker()], { tokens: 1_800, costUsd: 0.004, agentMs: 0 }) },
      { maker: { usage: { tokens: 400, costUsd: 0, agentMs: 1_000 } } },
    ],
  };
  await loops.run(script, input, async ({ activities, awaitingDecision }) => {
    await awaitingDecision();
    expect(activities.reviews).toEqual([{ sequence: 1, by: 'runMaker' }]);
    // #2's maker's activity was told what the loop had spent before it, the review's tokens included.
    expect(activities.inputsOf('runMaker')[1]!.verify!.usageBefore).toMatchObject({ tokens: 1_800 });
    expect(activities.verifications).toEqual([
      { sequence: 1, by: 'runMaker' },
      { sequence: 2, by: 'runMaker' },
    ]);
    expect(activities.inputsOf('recordVerdict').map((v) => [v.report.verdict, v.report.trigger])).toEqual([
      ['ITERATE', null],
      ['ESCALATE', 'BUDGET_EXHAUSTED'],
    ]);
  });
});

test('a maker that changed nothing escalates as NO_CHANGE', async () => {
  const script = {
    iterations: [
      { verification: gateFailed(1) },
      {
        maker: { noChange: true, changedFiles: [], diffHash: made(1).diffHash },
        verification: gateFailed(2, 'expected 3, got 0'),
      },
    ],
  };
  await loops.run(script, loopInput(), async ({ activities, awaitingDecision, state }) => {
    await awaitingDecision();
    expect(activities.inputsOf('recordVerdict')[1]!.report).toMatchObject({
      verdict: 'ESCALATE',
      trigger: 'NO_CHANGE',
      rule: 'NO_CHANGE',
      roundIteration: 2,
    });
    expect(activities.inputsOf('recordEscalation')[0]).toMatchObject({
      escalationSequence: 1,
      sequence: 2,
      report: { trigger: 'NO_CHANGE' },
    });
    expect((await state()).awaitingDecision).toEqual({ escalationSequence: 1, trigger: 'NO_CHANGE' });
  });
});

test('a review activity that fails escalates as REVIEW_UNAVAILABLE instead of failing the loop', async () => {
  const review = ApplicationFailure.nonRetryable(
    'the reviewer provider refused the API key (401)',
    'ReviewerUnavailable',
  );
  await loops.run({ iterations: [{ review }] }, loopInput(), async ({ activities, awaitingDecision, state }) => {
    await awaitingDecision();
    const { report } = activities.inputsOf('recordVerdict')[0]!;
    expect(report).toMatchObject({
      verdict: 'ESCALATE',
      trigger: 'REVIEW_UNAVAILABLE',
      rule: 'REVIEW_UNAVAILABLE',
      reasons: ['review unavailable: the reviewer provider refused the API key (401)'],
    });
    // The maker's activity reviewed, and a refused key is no failure a retry could cure: not asked again.
    expect(activities.reviews).toEqual([{ sequence: 1, by: 'runMaker' }]);
    expect(await state()).toMatchObject({
      status: 'AWAITING_DECISION',
      failureReason: null,
      awaitingDecision: { trigger: 'REVIEW_UNAVAILABLE' },
    });
  });
});

test("a review the maker's activity could not finish is asked of the review activity, under the same move into REVIEW", async () => {
  const script = { iterations: [{ reviewInVerificationFails: 'the model provider answered 503' }] };
  await loops.run(script, loopInput(), async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
    expect(activities.reviews).toEqual([
      { sequence: 1, by: 'runMaker' },
      { sequence: 1, by: 'runReview' },
    ]);
    // One move into REVIEW, whichever activity writes it: the timeline shows the phase once.
    expect(activities.inputsOf('runReview')[0]!.progress).toEqual(
      activities.inputsOf('runMaker')[0]!.verify!.review.progress,
    );
    expect(activities.inputsOf('recordVerdict')[0]!.report).toMatchObject({ verdict: 'PASS' });
  });
});

test("a verification the maker's activity could not finish is asked of the verification activity, under the same moves", async () => {
  const verificationFailures = [new Error('git worktree add exited 128: fatal: cannot lock ref')];
  await loops.run({ iterations: [{ verificationFailures }] }, loopInput(), async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
    expect(activities.verifications).toEqual([
      { sequence: 1, by: 'runMaker' },
      { sequence: 1, by: 'runVerification' },
    ]);
    expect(activities.reviews).toEqual([{ sequence: 1, by: 'runVerification' }]);
    // The moves into VERIFY and REVIEW the maker's activity was asked under: each phase shows once.
    const asked = activities.inputsOf('runMaker')[0]!.verify!;
    const verification = activities.inputsOf('runVerification')[0]!;
    expect(verification).toMatchObject({ sequence: 1, checkpointCommit: checkpointOf(1) });
    expect(verification.progress).toEqual(asked.progress);
    expect(verification.review).toEqual(asked.review);
    expect(activities.inputsOf('recordVerdict')[0]!.progress.move).toBe(asked.progress.move + 2);
  });
});

test('the last allowed iteration still failing escalates as MAX_ITERATIONS', async () => {
  const input = loopInput({ maxIterations: 2 });
  const script = {
    iterations: [
      { verification: gateFailed(1, 'expected 3, got -1') },
      { verification: gateFailed(2, 'expected 3, got 1') },
    ],
  };
  await loops.run(script, input, async ({ activities, awaitingDecision, state }) => {
    await awaitingDecision();
    expect(activities.inputsOf('runMaker').map((m) => [m.sequence, m.roundIteration, m.maxIterations])).toEqual([
      [1, 1, 2],
      [2, 2, 2],
    ]);
    expect(activities.inputsOf('recordVerdict').map((v) => [v.report.verdict, v.report.trigger])).toEqual([
      ['ITERATE', null],
      ['ESCALATE', 'MAX_ITERATIONS'],
    ]);
    expect(await state()).toMatchObject({
      status: 'AWAITING_DECISION',
      roundIteration: 2,
      sequence: 2,
      lastVerdict: 'ESCALATE',
      awaitingDecision: { escalationSequence: 1, trigger: 'MAX_ITERATIONS' },
    });
  });
});

test('passing gates with an unproven acceptance criterion iterate', async () => {
  await loops.run(
    { iterations: [{ verification: verified(1, { ac1: 'FAILED' }) }, {}] },
    loopInput(),
    async ({ handle, activities }) => {
      await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });
      expect(activities.inputsOf('recordVerdict')[0]!.report).toMatchObject({
        verdict: 'ITERATE',
        rule: 'ACCEPTANCE_UNPROVEN',
      });
      expect(activities.inputsOf('runMaker')[1]!.directives).toEqual([
        expect.stringMatching(/^1\. Prove AC-1 \(sum adds two numbers\) with passing evidence: /),
      ]);
    },
  );
});
