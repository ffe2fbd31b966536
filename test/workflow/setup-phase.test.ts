import { loopInput } from './support/loop-input';
import { checkoutSetupFailed, GATE_PLAN_WITH_SETUP, gateFailed } from './support/loop-results';
import { loopTestEnvironment } from './support/test-environment';

// The SETUP phase: dependencies installed in the maker's workspace before the first maker, after a manifest
// changed, and after a human retries an ENVIRONMENT escalation. Its failure goes to a human, never to the maker.

const loops = loopTestEnvironment();

const ALICE = 'alice@example.com';
const NPM_CI_FAILED = 'npm ci exited 1: npm ERR! network request to registry failed';
const withSetup = { gatePlan: GATE_PLAN_WITH_SETUP };

test('a gate plan with set-up commands sets the workspace up before the first maker', async () => {
  const input = loopInput();
  await loops.run({ ...withSetup, iterations: [{}] }, input, async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
    expect(activities.calls.map((c) => c.activity).slice(0, 6)).toEqual([
      'prepareWorkspace',
      'freezeContract',
      'recordProgress',
      'runWorkspaceSetup',
      // The base run needs the set-up: the contract's test names are resolved after it.
      'resolveAcceptanceTests',
      'runMaker',
    ]);
    expect(activities.inputsOf('recordProgress')[0]).toMatchObject({
      status: 'RUNNING',
      phase: 'SETUP',
      roundIteration: 0,
    });
    expect(activities.inputsOf('runWorkspaceSetup')).toEqual([{ loopId: input.loopId, key: '0.0' }]);
  });
});

test('a maker that changed a manifest has the workspace set up again before the next maker', async () => {
  const script = {
    ...withSetup,
    iterations: [{ maker: { changedFiles: ['package.json', 'src/sum.js'] }, verification: gateFailed(1) }, {}],
  };
  await loops.run(script, loopInput(), async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });
    expect(activities.inputsOf('runWorkspaceSetup').map((s) => s.key)).toEqual(['0.0', '1.0']);
    const order = activities.calls.map((c) => c.activity);
    expect(order.slice(order.lastIndexOf('runWorkspaceSetup') - 2, order.lastIndexOf('runWorkspaceSetup') + 2)).toEqual(
      ['recordVerdict', 'recordProgress', 'runWorkspaceSetup', 'runMaker'],
    );
  });
});

describe('a set-up that fails escalates as ENVIRONMENT', () => {
  const failing = { ...withSetup, setup: [{ problem: NPM_CI_FAILED, evidenceIds: ['evidence-setup-0.0-1'] }] };

  test('retry runs the set-up again, then the maker with the guidance, in the same run', async () => {
    const input = loopInput();
    const guidance = 'the registry mirror is back; try again';
    await loops.run(
      { ...failing, iterations: [{}] },
      input,
      async ({ handle, activities, awaitingDecision, decide, state, currentRun }) => {
        await awaitingDecision();
        expect(activities.inputsOf('runMaker')).toEqual([]);
        expect(activities.inputsOf('recordEscalation')).toEqual([
          {
            loopId: input.loopId,
            escalationSequence: 1,
            sequence: 0,
            report: expect.objectContaining({
              verdict: 'ESCALATE',
              trigger: 'ENVIRONMENT',
              rule: 'ENVIRONMENT',
              roundIteration: 0,
              maxIterations: 3,
              reasons: [`environment problem: ${NPM_CI_FAILED}`],
            }),
          },
        ]);
        expect(await state()).toMatchObject({
          status: 'AWAITING_DECISION',
          phase: 'AWAITING_DECISION',
          awaitingDecision: { escalationSequence: 1, trigger: 'ENVIRONMENT' },
        });

        await decide({ kind: 'retry', actor: ALICE, guidance, ticket: 'dt_1' });
        await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
        expect(activities.inputsOf('runWorkspaceSetup').map((s) => s.key)).toEqual(['0.0', '0.1']);
        expect(activities.inputsOf('freezeContract').map((f) => [f.version, f.reason])).toEqual([
          [1, 'submitted'],
          [2, `retry by ${ALICE}`],
        ]);
        expect(activities.inputsOf('runMaker')).toEqual([
          expect.objectContaining({
            sequence: 1,
            roundIteration: 1,
            contractVersion: 2,
            directives: [`1. Human guidance: ${guidance}`],
          }),
        ]);
        expect((await currentRun()).continuedFrom).toBeNull();
      },
    );
  });

  test('reject ends the loop before any maker', async () => {
    await loops.run(
      { ...failing, iterations: [] },
      loopInput(),
      async ({ handle, activities, awaitingDecision, decide }) => {
        await awaitingDecision();
        await decide({ kind: 'reject', actor: ALICE, ticket: 'dt_1' });
        await expect(handle.result()).resolves.toEqual({ status: 'REJECTED', iterations: 0, reportId: null });
        expect(activities.inputsOf('runWorkspaceSetup')).toHaveLength(1);
        expect(activities.inputsOf('runMaker')).toEqual([]);
      },
    );
  });

  test('approve goes on to the maker without the set-up', async () => {
    await loops.run(
      { ...failing, iterations: [{}] },
      loopInput(),
      async ({ handle, activities, awaitingDecision, decide }) => {
        await awaitingDecision();
        await decide({ kind: 'approve', actor: ALICE, ticket: 'dt_1' });
        await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
        expect(activities.inputsOf('runWorkspaceSetup')).toHaveLength(1);
        expect(activities.inputsOf('freezeContract')).toHaveLength(1);
        expect(activities.inputsOf('runMaker')).toEqual([
          expect.objectContaining({ sequence: 1, contractVersion: 1, directives: [] }),
        ]);
      },
    );
  });
});

test('a verification checkout that cannot be set up escalates as ENVIRONMENT; retry sets the workspace up first in the new run', async () => {
  const script = { ...withSetup, iterations: [{ verification: checkoutSetupFailed(NPM_CI_FAILED) }, {}] };
  await loops.run(script, loopInput(), async ({ handle, activities, awaitingDecision, decide, currentRun }) => {
    await awaitingDecision();
    expect(activities.reviews).toEqual([]);
    expect(activities.inputsOf('recordVerdict')[0]!.report).toMatchObject({
      verdict: 'ESCALATE',
      trigger: 'ENVIRONMENT',
      reasons: [`environment problem: ${NPM_CI_FAILED}`],
    });

    await decide({ kind: 'retry', actor: ALICE, guidance: 'the registry mirror is back', ticket: 'dt_1' });
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });
    expect((await currentRun()).input.resume).toMatchObject({ sequence: 1, escalations: 1, setupDue: true });
    expect(activities.inputsOf('runWorkspaceSetup').map((s) => s.key)).toEqual(['0.0', '1.1']);
    const order = activities.calls.map((c) => c.activity);
    expect(order.indexOf('runWorkspaceSetup', order.indexOf('recordDecision'))).toBeLessThan(
      order.lastIndexOf('runMaker'),
    );
  });
});
