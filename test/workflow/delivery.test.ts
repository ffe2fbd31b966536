import type { DeliveryPreparation } from '../../activities/prepare-delivery';
import { LoopContextImpactKey } from '../../workflows/search-attributes';
import { loopInput } from './support/loop-input';
import { gateFailed } from './support/loop-results';
import { loopTestEnvironment } from './support/test-environment';

// A passed change on its way to delivery: replayed onto a base that moved and verified there again, a
// conflict or a new failure escalated as BASE_DRIFT, a MAJOR context impact held for a person when asked.

const loops = loopTestEnvironment();

const ALICE = 'alice@example.com';
const TICKET = 'dt_4f1c2a9e-the-api-issued-this';
const MOVED = 'c'.repeat(40);
const REPLAYED = 'd'.repeat(40);

const drift = (conflicts: string[]): DeliveryPreparation['drift'] => ({
  baseRef: 'main',
  baseCommit: 'b'.repeat(40),
  currentCommit: MOVED,
  behind: 2,
  conflicts,
  problem: null,
});
const replayed = {
  sequence: 2,
  checkpointCommit: REPLAYED,
  diffHash: 'e'.repeat(64),
  changedFiles: ['src/sum.js'],
  inspected: [],
};

test('a base that moved: the change replayed onto it is verified again, not made or reviewed again, then delivered', async () => {
  const input = loopInput();
  const deliveries = [{ drift: drift([]), replayed, contextImpact: { level: 'TARGETED' as const, reasons: ['x'] } }];
  await loops.run({ iterations: [{}, {}], deliveries }, input, async ({ handle, activities }) => {
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });
    expect(activities.calls.map((c) => c.activity).slice(-5)).toEqual([
      'recordVerdict',
      'prepareDelivery',
      'runVerification',
      'recordVerdict',
      'deliver',
    ]);
    expect(activities.inputsOf('prepareDelivery')).toEqual([
      expect.objectContaining({ loopId: input.loopId, sequence: 1, roundIteration: 1 }),
    ]);
    expect(activities.inputsOf('runMaker')).toHaveLength(1);
    // #1's maker's activity verified and reviewed the change; the replayed change is verified again, not reviewed.
    expect(activities.reviews).toEqual([{ sequence: 1, by: 'runMaker' }]);
    expect(activities.verifications).toEqual([
      { sequence: 1, by: 'runMaker' },
      { sequence: 2, by: 'runVerification' },
    ]);
    const [verification] = activities.inputsOf('runVerification');
    expect(verification).toMatchObject({ sequence: 2, checkpointCommit: REPLAYED });
    expect(verification!.review).toBeUndefined();
    expect(activities.inputsOf('recordVerdict').map((v) => [v.sequence, v.report.verdict])).toEqual([
      [1, 'PASS'],
      [2, 'PASS'],
    ]);
    expect(activities.inputsOf('deliver')).toEqual([
      expect.objectContaining({ sequence: 2, outcome: 'PASSED', approvedBy: null }),
    ]);
    // The preparation was asked to deliver, but the base had moved: the deliver activity delivered.
    expect(activities.inputsOf('prepareDelivery')[0]!.deliverWhenClear).toBeDefined();
    expect(activities.delivered.map((d) => [d.sequence, d.by])).toEqual([[2, 'deliver']]);
    expect((await handle.describe()).typedSearchAttributes.get(LoopContextImpactKey)).toBe('TARGETED');
  });
});

test('a replayed change that fails verification on the moved base escalates BASE_DRIFT; approve delivers it', async () => {
  const input = loopInput();
  const deliveries = [{ drift: drift([]), replayed }];
  await loops.run(
    { iterations: [{}, { verification: gateFailed(2, 'sum: expected 3, got 4 after upstream change') }], deliveries },
    input,
    async ({ handle, activities, awaitingDecision, decide, state }) => {
      await awaitingDecision();
      expect(await state()).toMatchObject({ awaitingDecision: { escalationSequence: 1, trigger: 'BASE_DRIFT' } });
      const [escalation] = activities.inputsOf('recordEscalation');
      expect(escalation).toMatchObject({ sequence: 2, report: { verdict: 'ESCALATE', trigger: 'BASE_DRIFT' } });
      expect(escalation!.report.reasons.at(-1)).toBe(
        `base: \`main\` moved 2 commit(s) since the loop started (now \`${MOVED}\`); the change still merges cleanly onto it`,
      );
      // The judge's own verdict on the replayed iteration is what it was; the escalation names the drift.
      expect(activities.inputsOf('recordVerdict').at(-1)).toMatchObject({
        sequence: 2,
        report: { verdict: 'ITERATE' },
      });

      await decide({ kind: 'approve', actor: ALICE, escalationSequence: 1, ticket: TICKET });
      await expect(handle.result()).resolves.toMatchObject({ status: 'APPROVED', iterations: 2 });
      expect(activities.inputsOf('deliver')).toEqual([
        expect.objectContaining({ sequence: 2, outcome: 'APPROVED_BY_HUMAN', approvedBy: ALICE }),
      ]);
    },
  );
});

test('a change that no longer merges onto the moved base escalates BASE_DRIFT without verifying; reject ends it', async () => {
  const input = loopInput();
  await loops.run(
    { iterations: [{}], deliveries: [{ drift: drift(['src/sum.js']) }] },
    input,
    async ({ handle, activities, awaitingDecision, decide }) => {
      await awaitingDecision();
      const [escalation] = activities.inputsOf('recordEscalation');
      expect(escalation).toMatchObject({ sequence: 1, report: { trigger: 'BASE_DRIFT' } });
      expect(escalation!.report.directives).toEqual([
        "1. The base `main` moved and the change no longer merges onto it (conflicts in src/sum.js): the workspace is still on the loop's base.",
      ]);
      expect(activities.verifications).toEqual([{ sequence: 1, by: 'runMaker' }]);

      await decide({ kind: 'reject', actor: ALICE, escalationSequence: 1, ticket: TICKET });
      await expect(handle.result()).resolves.toMatchObject({ status: 'REJECTED' });
      expect(activities.delivered).toEqual([]);
    },
  );
});

test('a MAJOR context impact waits for a person when asked; approve delivers it as PASSED, approved by them', async () => {
  const input = loopInput();
  const contextImpact = { level: 'MAJOR' as const, reasons: ['CI configuration changed: .github/workflows/ci.yml'] };
  await loops.run(
    { iterations: [{}], deliveries: [{ contextImpact, approvalRequired: true }] },
    input,
    async ({ handle, activities, awaitingDecision, decide, state }) => {
      await awaitingDecision();
      expect(await state()).toMatchObject({ awaitingDecision: { trigger: 'MAJOR_CONTEXT_IMPACT' } });
      expect(activities.inputsOf('recordEscalation')[0]!.report.reasons.at(-1)).toBe(
        'context impact MAJOR: CI configuration changed: .github/workflows/ci.yml',
      );
      expect((await handle.describe()).typedSearchAttributes.get(LoopContextImpactKey)).toBe('MAJOR');

      await decide({ kind: 'approve', actor: ALICE, escalationSequence: 1, ticket: TICKET });
      await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
      expect(activities.inputsOf('deliver')).toEqual([
        expect.objectContaining({ sequence: 1, outcome: 'PASSED', approvedBy: ALICE }),
      ]);
    },
  );
});
