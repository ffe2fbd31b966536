import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  LoopIterationKey,
  LoopPhaseKey,
  LoopPullRequestKey,
  LoopRepoKey,
  LoopStatusKey,
  LoopVerdictKey,
} from '../../workflows/search-attributes';
import { Prisma } from '../../prisma/client';
import { loopInput } from './support/loop-input';
import { gateFailed } from './support/loop-results';
import { loopTestEnvironment } from './support/test-environment';

// How a loop ends besides a verdict and a decision: cancelled, failed by an activity, and what delivery
// leaves in the Web UI's search attributes.

const loops = loopTestEnvironment();

test('a loop cancelled while it waits for a decision records CANCELLED', async () => {
  await loops.run(
    { iterations: [{ verification: gateFailed(1) }] },
    loopInput({ maxIterations: 1 }),
    async ({ handle, activities, awaitingDecision, state }) => {
      await awaitingDecision();
      const waiting = (await handle.describe()).typedSearchAttributes;
      expect([LoopStatusKey, LoopPhaseKey, LoopIterationKey, LoopVerdictKey].map((key) => waiting.get(key))).toEqual([
        'AWAITING_DECISION',
        'AWAITING_DECISION',
        1,
        'ESCALATE',
      ]);

      await handle.cancel();
      const failure = await handle.result().catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      expect(activities.inputsOf('recordProgress').at(-1)).toMatchObject({
        status: 'CANCELLED',
        phase: 'DONE',
        failureReason: 'cancelled',
      });
      expect(activities.inputsOf('recordDecision')).toEqual([]);
      expect(await state()).toMatchObject({ status: 'CANCELLED', phase: 'DONE', failureReason: 'cancelled' });
      expect((await handle.describe()).typedSearchAttributes.get(LoopStatusKey)).toBe('CANCELLED');
    },
  );
});

test('an activity that fails for good fails the loop, recorded as FAILED with the root cause', async () => {
  const problem = '.ai-engineering-loop/verification.json: gates.tests.argv: argv needs at least the program to run';
  const prepareFailure = ApplicationFailure.create({
    type: 'VerificationConfigError',
    message: problem,
    nonRetryable: true,
  });
  await loops.run({ prepareFailure, iterations: [] }, loopInput(), async ({ handle, activities, state }) => {
    const failure = await handle.result().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ActivityFailure);
    expect(cause?.cause).toMatchObject({ type: 'VerificationConfigError', message: problem });

    expect(activities.calls.map((c) => c.activity)).toEqual(['prepareWorkspace', 'recordProgress']);
    expect(activities.inputsOf('recordProgress')[0]).toMatchObject({
      status: 'FAILED',
      phase: 'DONE',
      failureReason: `prepareWorkspace: ${problem}`,
    });
    expect(await state()).toMatchObject({
      status: 'FAILED',
      phase: 'DONE',
      failureReason: `prepareWorkspace: ${problem}`,
    });
  });
});

test('an activity that keeps failing fails the loop once its retries are spent (on the skipped clock)', async () => {
  const verification = new Error('git worktree add exited 128: fatal: not a valid object name');
  await loops.run({ iterations: [{ verification }] }, loopInput(), async ({ handle, activities }) => {
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    // The maker's activity's attempt, then the verification activity's five.
    expect(activities.verifications.map((v) => v.by)).toEqual(['runMaker', ...Array(5).fill('runVerification')]);
    expect(activities.inputsOf('recordProgress').at(-1)).toMatchObject({
      status: 'FAILED',
      phase: 'DONE',
      failureReason: `runVerification: ${verification.message}`,
    });
  });
});

test('an unreachable database is waited out past the attempts a logic error gets, and the loop goes on', async () => {
  // As the pg adapter reports it through the client, on each of 8 attempts (a logic error gets 5).
  const unreachable = () =>
    new Prisma.PrismaClientKnownRequestError(
      "Invalid `prisma.iteration.findUnique()` invocation: Can't reach database server",
      {
        code: 'P1001',
        clientVersion: '6.19.3',
        meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } },
      },
    );
  const verificationFailures = Array.from({ length: 8 }, unreachable);
  await loops.run({ iterations: [{ verificationFailures }] }, loopInput(), async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED' });
    // The maker's activity's attempt, then the verification activity's eight.
    expect(activities.verifications.map((v) => v.by)).toEqual(['runMaker', ...Array(8).fill('runVerification')]);
  });
});

test('a delivery that opened a pull request leaves its URL in the LoopPullRequest search attribute', async () => {
  const pullRequestUrl = 'https://github.com/acme/sum/pull/42';
  const input = loopInput({
    repository: { url: 'https://github.com/acme/sum.git', baseRef: 'main', credential: 'github-bot' },
    delivery: { push: true, pullRequest: { provider: 'github' } },
  });
  await loops.run({ iterations: [{}], pullRequestUrl }, input, async ({ handle }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED' });
    const attributes = (await handle.describe()).typedSearchAttributes;
    expect(
      [LoopPullRequestKey, LoopStatusKey, LoopPhaseKey, LoopVerdictKey, LoopRepoKey].map((key) => attributes.get(key)),
    ).toEqual([pullRequestUrl, 'PASSED', 'DONE', 'PASS', 'https://github.com/acme/sum.git']);
  });
});

test('a delivery without a pull request sets no LoopPullRequest', async () => {
  await loops.run({ iterations: [{}] }, loopInput(), async ({ handle }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED' });
    expect((await handle.describe()).typedSearchAttributes.get(LoopPullRequestKey)).toBeUndefined();
  });
});
