import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Decision } from '../../domain/decision';
import { decisionSignal, INVALID_DECISION, NOT_AWAITING_DECISION } from '../../workflows/messages';
import { loopInput } from './support/loop-input';
import { gateFailed } from './support/loop-results';
import { loopTestEnvironment } from './support/test-environment';

// Decisions the loop does not act on: the update's validator rejects them before anything is recorded, a
// signal it cannot take is recorded as refused, and authorizeDecision may refuse an accepted one.

const loops = loopTestEnvironment();

const ALICE = 'alice@example.com';
const OPERATOR = 'ops-oncall';
const escalating = () => loopInput({ maxIterations: 1 });
const failingFirst = { verification: gateFailed(1) };

/** What the update's validator threw, as the client sees it. */
async function refusal(update: Promise<unknown>): Promise<{ type: string | undefined; message: string }> {
  const err = await update.then(
    () => {
      throw new Error('the update was accepted');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause as { type?: string; message: string };
  return { type: cause.type, message: cause.message };
}

test('a malformed decision signal is recorded as refused and the loop keeps waiting for a valid one', async () => {
  const input = escalating();
  await loops.run({ iterations: [failingFirst] }, input, async ({ handle, activities, awaitingDecision, state }) => {
    await awaitingDecision();
    // A retry must carry guidance for the maker.
    await handle.signal(decisionSignal, { kind: 'retry', actor: OPERATOR } as unknown as Decision);

    const refused = await activities.called('recordRefusedDecision');
    expect(refused).toEqual({
      loopId: input.loopId,
      refusalId: expect.any(String),
      channel: 'signal',
      detail: expect.stringMatching(/^decision signal \(kind "retry", actor "ops-oncall"\) refused: guidance: /),
    });
    expect(await state()).toMatchObject({ status: 'AWAITING_DECISION', awaitingDecision: { escalationSequence: 1 } });
    expect(activities.inputsOf('authorizeDecision')).toEqual([]);

    await handle.signal(decisionSignal, { kind: 'reject', actor: OPERATOR });
    await expect(handle.result()).resolves.toMatchObject({ status: 'REJECTED' });
    expect(activities.inputsOf('authorizeDecision')).toEqual([
      expect.objectContaining({ channel: 'signal', decision: { kind: 'reject', actor: OPERATOR } }),
    ]);
    expect(activities.inputsOf('recordRefusedDecision')).toHaveLength(1);
  });
});

test('a decision while the loop is not awaiting one is rejected by the update validator, and refused as a signal', async () => {
  let releaseMaker!: () => void;
  const makerHeldUntil = new Promise<void>((resolve) => (releaseMaker = resolve));
  const input = loopInput();
  await loops.run({ iterations: [{ makerHeldUntil }] }, input, async ({ handle, activities, decide, state }) => {
    await activities.called('runMaker');

    await expect(refusal(decide({ kind: 'approve', actor: ALICE, ticket: 'dt_1' }))).resolves.toEqual({
      type: NOT_AWAITING_DECISION,
      message: `loop ${input.loopId} is not awaiting a decision (status RUNNING)`,
    });
    await handle.signal(decisionSignal, { kind: 'approve', actor: OPERATOR });
    expect((await activities.called('recordRefusedDecision')).detail).toBe(
      `decision signal (kind "approve", actor "${OPERATOR}") refused: loop ${input.loopId} is not awaiting a decision (status RUNNING)`,
    );
    expect(await state()).toMatchObject({ status: 'RUNNING', phase: 'MAKER', awaitingDecision: null });

    releaseMaker();
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
    expect(activities.inputsOf('authorizeDecision')).toEqual([]);
    expect(activities.inputsOf('recordDecision')).toEqual([]);
  });
});

test('a decision naming an earlier escalation is rejected as stale; one naming the open escalation is taken', async () => {
  const input = loopInput({ maxIterations: 1, requireContractApproval: true });
  await loops.run({ iterations: [failingFirst] }, input, async ({ handle, activities, awaitingDecision, decide }) => {
    await awaitingDecision(1);
    await decide({ kind: 'approve', actor: ALICE, escalationSequence: 1, ticket: 'dt_1' });
    await awaitingDecision(2);
    expect(activities.inputsOf('recordEscalation')).toEqual([
      expect.objectContaining({ escalationSequence: 2, sequence: 1 }),
    ]);

    // A page still showing the contract approval approves it again.
    await expect(
      refusal(decide({ kind: 'approve', actor: ALICE, escalationSequence: 1, ticket: 'dt_2' })),
    ).resolves.toEqual({
      type: NOT_AWAITING_DECISION,
      message: `loop ${input.loopId} is not awaiting a decision on escalation #1 (escalation #2 is open)`,
    });
    await expect(decide({ kind: 'reject', actor: ALICE, escalationSequence: 2, ticket: 'dt_3' })).resolves.toEqual({
      escalationSequence: 2,
      kind: 'reject',
    });

    await expect(handle.result()).resolves.toMatchObject({ status: 'REJECTED' });
    expect(activities.inputsOf('authorizeDecision').map((a) => a.decision.ticket)).toEqual(['dt_1', 'dt_3']);
    expect(activities.inputsOf('recordDecision').map((d) => [d.escalationSequence, d.decision.kind])).toEqual([
      [1, 'approve'],
      [2, 'reject'],
    ]);
  });
});

test('an amendment that would make the contract invalid is rejected by the update validator', async () => {
  const input = escalating();
  await loops.run({ iterations: [failingFirst] }, input, async ({ activities, awaitingDecision, decide, state }) => {
    await awaitingDecision();
    const { type, message } = await refusal(
      decide({ kind: 'amend', actor: ALICE, contract: { acceptanceCriteria: [] }, ticket: 'dt_1' }),
    );
    expect(type).toBe(INVALID_DECISION);
    expect(message).toMatch(/^the amended contract is invalid: contract\.acceptanceCriteria: /);
    expect(await state()).toMatchObject({ status: 'AWAITING_DECISION', awaitingDecision: { escalationSequence: 1 } });
    expect(activities.inputsOf('authorizeDecision')).toEqual([]);
    expect(activities.inputsOf('freezeContract')).toHaveLength(1);
  });
});

test('a decision authorizeDecision refuses is not acted on: the loop keeps waiting for one it honours', async () => {
  const input = escalating();
  const script = {
    iterations: [failingFirst],
    authorizations: [{ honoured: false as const, reason: 'the ticket was issued for another decision' }],
  };
  await loops.run(script, input, async ({ handle, activities, awaitingDecision, decide, state }) => {
    await awaitingDecision();
    // Accepted by the validator (it cannot check tickets): refused afterwards.
    await expect(decide({ kind: 'approve', actor: 'mallory', ticket: 'dt_forged' })).resolves.toEqual({
      escalationSequence: 1,
      kind: 'approve',
    });
    await activities.called('authorizeDecision');
    // Answered once the workflow task that ran the authorization completed.
    expect(await state()).toMatchObject({ status: 'AWAITING_DECISION', awaitingDecision: { escalationSequence: 1 } });
    expect(activities.inputsOf('recordDecision')).toEqual([]);

    await decide({ kind: 'reject', actor: ALICE, ticket: 'dt_real' });
    await expect(handle.result()).resolves.toMatchObject({ status: 'REJECTED' });
    expect(activities.inputsOf('authorizeDecision').map((a) => [a.decision.actor, a.channel])).toEqual([
      ['mallory', 'update'],
      [ALICE, 'update'],
    ]);
    expect(activities.inputsOf('recordDecision')).toEqual([
      { loopId: input.loopId, escalationSequence: 1, decision: { kind: 'reject', actor: ALICE } },
    ]);
  });
});
