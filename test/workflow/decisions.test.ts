import { LoopIterationKey, LoopStatusKey } from '../../workflows/search-attributes';
import { loopInput } from './support/loop-input';
import { gateFailed, systemBlocker, verified } from './support/loop-results';
import { loopTestEnvironment } from './support/test-environment';

// A human's decision on an escalation (approve, reject, retry, amend), the contract approval before the
// maker starts, and the decision deadline's default when nobody decides.

const loops = loopTestEnvironment();

const ALICE = 'alice@example.com';
const TICKET = 'dt_4f1c2a9e-the-api-issued-this';
const GATE_FAILURE = 'sum adds two numbers: expected 3, got -1';
/** One iteration allowed, and its tests gate fails: the loop escalates as MAX_ITERATIONS. */
const escalating = () => loopInput({ maxIterations: 1 });
const failingFirst = { verification: gateFailed(1, GATE_FAILURE) };

test('approve delivers the escalated iteration as a human override', async () => {
  const input = escalating();
  await loops.run(
    { iterations: [failingFirst] },
    input,
    async ({ handle, activities, awaitingDecision, decide, state }) => {
      await awaitingDecision();
      expect(await state()).toMatchObject({
        status: 'AWAITING_DECISION',
        phase: 'AWAITING_DECISION',
        awaitingDecision: { escalationSequence: 1, trigger: 'MAX_ITERATIONS' },
      });

      await expect(decide({ kind: 'approve', actor: ALICE, escalationSequence: 1, ticket: TICKET })).resolves.toEqual({
        escalationSequence: 1,
        kind: 'approve',
      });
      await expect(handle.result()).resolves.toEqual({
        status: 'APPROVED',
        iterations: 1,
        reportId: `report-final-${input.loopId}`,
      });

      expect(activities.calls.map((c) => c.activity).slice(-5)).toEqual([
        'recordEscalation',
        'recordProgress',
        'authorizeDecision',
        'recordDecision',
        'deliver',
      ]);
      expect(activities.inputsOf('authorizeDecision')).toEqual([
        {
          loopId: input.loopId,
          escalationSequence: 1,
          channel: 'update',
          refusalId: expect.any(String),
          decision: { kind: 'approve', actor: ALICE, escalationSequence: 1, ticket: TICKET },
        },
      ]);
      // The single-use ticket goes no further than its authorization.
      expect(activities.inputsOf('recordDecision')).toEqual([
        {
          loopId: input.loopId,
          escalationSequence: 1,
          decision: { kind: 'approve', actor: ALICE, escalationSequence: 1 },
        },
      ]);
      expect(activities.inputsOf('deliver')).toEqual([
        expect.objectContaining({ sequence: 1, outcome: 'APPROVED_BY_HUMAN', approvedBy: ALICE }),
      ]);
      expect(await state()).toMatchObject({
        status: 'APPROVED',
        phase: 'DONE',
        awaitingDecision: null,
        lastVerdict: 'ESCALATE',
      });
    },
  );
});

test('reject ends the loop without delivering', async () => {
  const input = escalating();
  await loops.run(
    { iterations: [failingFirst] },
    input,
    async ({ handle, activities, awaitingDecision, decide, state }) => {
      await awaitingDecision();
      await decide({ kind: 'reject', actor: ALICE, comment: 'not worth it', ticket: TICKET });

      await expect(handle.result()).resolves.toEqual({ status: 'REJECTED', iterations: 1, reportId: null });
      expect(activities.delivered).toEqual([]);
      expect(activities.inputsOf('recordDecision')).toEqual([
        {
          loopId: input.loopId,
          escalationSequence: 1,
          decision: { kind: 'reject', actor: ALICE, comment: 'not worth it' },
        },
      ]);
      expect(activities.inputsOf('recordProgress').at(-1)).toMatchObject({
        status: 'REJECTED',
        phase: 'DONE',
        roundIteration: 1,
        lastVerdict: 'ESCALATE',
      });
      expect(await state()).toMatchObject({ status: 'REJECTED', phase: 'DONE' });
      expect((await handle.describe()).typedSearchAttributes.get(LoopStatusKey)).toBe('REJECTED');
    },
  );
});

test('retry with guidance continues as a new run that carries the loop on', async () => {
  const input = escalating();
  const guidance = 'sum must also handle negative numbers';
  await loops.run(
    { iterations: [failingFirst, {}] },
    input,
    async ({ handle, activities, awaitingDecision, decide, state, currentRun }) => {
      await awaitingDecision();
      const first = await currentRun();
      await decide({ kind: 'retry', actor: ALICE, guidance, ticket: TICKET });

      await expect(handle.result()).resolves.toEqual({
        status: 'PASSED',
        iterations: 2,
        reportId: `report-final-${input.loopId}`,
      });
      expect(activities.inputsOf('freezeContract').map((f) => [f.version, f.reason])).toEqual([
        [1, 'submitted'],
        [2, `retry by ${ALICE}`],
      ]);
      const retried = activities.inputsOf('freezeContract')[1]!.contract;
      expect(retried.constraints).toEqual([...input.request.contract.constraints, `Human guidance: ${guidance}`]);

      const second = await currentRun();
      expect(second.continuedFrom).toBe(first.runId);
      expect(second.input).toEqual({
        loopId: input.loopId,
        request: input.request,
        resume: {
          contract: retried,
          contractVersion: 2,
          contractHash: expect.stringMatching(/^[0-9a-f]{64}$/),
          sequence: 1,
          escalations: 1,
          directives: [`1. Fix the failing tests gate: ${GATE_FAILURE}.`, `2. Human guidance: ${guidance}`],
          gatePlan: expect.objectContaining({ gates: [expect.objectContaining({ gate: 'tests' })] }),
          usage: { tokens: 0, costUsd: 0, agentMs: 4_000 },
          setupDue: false,
          pause: null,
        },
      });
      // The new run first claims the loop from the run it continues (activities/run-binding.ts), once.
      expect(activities.inputsOf('claimContinuedRun')).toEqual([{ loopId: input.loopId, continuedFrom: first.runId }]);
      // The new run prepares nothing again: it goes straight to the maker, a new round of iterations.
      expect(activities.inputsOf('prepareWorkspace')).toHaveLength(1);
      expect(activities.inputsOf('runMaker')[1]).toMatchObject({
        sequence: 2,
        roundIteration: 1,
        contractVersion: 2,
        directives: second.input.resume!.directives,
      });
      expect(await state()).toMatchObject({
        status: 'PASSED',
        contractVersion: 2,
        sequence: 2,
        roundIteration: 1,
        iterations: [{ sequence: 2, roundIteration: 1, contractVersion: 2, verdict: 'PASS' }],
      });
      const attributes = (await handle.describe()).typedSearchAttributes;
      expect([attributes.get(LoopStatusKey), attributes.get(LoopIterationKey)]).toEqual(['PASSED', 1]);
    },
  );
});

test('amend freezes a new contract version whose criteria the next run is judged by', async () => {
  const input = escalating();
  const [, gateCriterion] = input.request.contract.acceptanceCriteria;
  // AC-1's test keeps failing; the amendment drops AC-1.
  const script = {
    iterations: [{ verification: verified(1, { ac1: 'FAILED' }) }, { verification: verified(2, { ac1: 'FAILED' }) }],
  };
  await loops.run(script, input, async ({ handle, activities, awaitingDecision, decide, currentRun }) => {
    await awaitingDecision();
    expect(activities.inputsOf('recordVerdict')[0]!.report).toMatchObject({
      verdict: 'ESCALATE',
      trigger: 'MAX_ITERATIONS',
      rule: 'MAX_ITERATIONS',
    });
    await decide({ kind: 'amend', actor: ALICE, contract: { acceptanceCriteria: [gateCriterion] }, ticket: TICKET });

    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });
    const amended = activities.inputsOf('freezeContract')[1]!;
    expect(amended).toMatchObject({
      version: 2,
      reason: `amended by ${ALICE}`,
      contract: { ...input.request.contract, acceptanceCriteria: [gateCriterion] },
    });
    expect((await currentRun()).input.resume).toMatchObject({ contract: amended.contract, contractVersion: 2 });
    expect(activities.inputsOf('runMaker')[1]).toMatchObject({
      sequence: 2,
      contractVersion: 2,
      verify: expect.anything(),
    });
    expect(activities.inputsOf('recordVerdict')[1]!.report).toMatchObject({
      verdict: 'PASS',
      acCompliance: [{ id: 'AC-2', status: 'PROVEN' }],
    });
  });
});

describe('contract approval', () => {
  const approving = () => loopInput({ requireContractApproval: true });

  test("the maker waits for the contract's approval, then the loop runs", async () => {
    const input = approving();
    await loops.run({ iterations: [{}] }, input, async ({ handle, activities, awaitingDecision, decide, state }) => {
      await awaitingDecision();
      expect(activities.calls.map((c) => c.activity)).toEqual([
        'prepareWorkspace',
        'freezeContract',
        'recordContractApproval',
        'recordProgress',
      ]);
      expect(activities.inputsOf('recordContractApproval')).toEqual([
        { loopId: input.loopId, escalationSequence: 1, contractVersion: 1 },
      ]);
      expect(await state()).toMatchObject({
        status: 'AWAITING_DECISION',
        sequence: 0,
        iterations: [],
        awaitingDecision: { escalationSequence: 1, trigger: 'CONTRACT_APPROVAL' },
      });

      await decide({ kind: 'approve', actor: ALICE, ticket: TICKET });
      await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
      expect(activities.inputsOf('recordDecision')).toEqual([
        expect.objectContaining({ escalationSequence: 1, decision: { kind: 'approve', actor: ALICE } }),
      ]);
      expect(activities.inputsOf('runMaker')).toEqual([expect.objectContaining({ sequence: 1, contractVersion: 1 })]);
      expect(activities.inputsOf('freezeContract')).toHaveLength(1);
    });
  });

  test('an amended contract is frozen as v2 before the maker starts, in the same run', async () => {
    await loops.run(
      { iterations: [{}] },
      approving(),
      async ({ handle, activities, awaitingDecision, decide, currentRun }) => {
        await awaitingDecision();
        await decide({
          kind: 'amend',
          actor: ALICE,
          contract: { objective: 'Make sum() add any number of arguments.' },
          ticket: TICKET,
        });

        await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
        expect(activities.inputsOf('freezeContract').map((f) => [f.version, f.reason, f.contract.objective])).toEqual([
          [1, 'submitted', 'Make sum() add its two arguments.'],
          [2, `amended by ${ALICE}`, 'Make sum() add any number of arguments.'],
        ]);
        expect(activities.inputsOf('runMaker')).toEqual([expect.objectContaining({ sequence: 1, contractVersion: 2 })]);
        expect((await currentRun()).continuedFrom).toBeNull();
      },
    );
  });

  test('a rejected contract ends the loop before any maker', async () => {
    await loops.run({ iterations: [] }, approving(), async ({ handle, activities, awaitingDecision, decide }) => {
      await awaitingDecision();
      await decide({ kind: 'reject', actor: ALICE, ticket: TICKET });

      await expect(handle.result()).resolves.toEqual({ status: 'REJECTED', iterations: 0, reportId: null });
      expect(activities.inputsOf('runMaker')).toEqual([]);
      expect(activities.inputsOf('recordProgress').at(-1)).toMatchObject({ status: 'REJECTED', phase: 'DONE' });
    });
  });
});

describe('test names the base commit has more than once', () => {
  const SHARED = {
    acId: 'AC-1',
    name: 'sum adds two numbers',
    candidates: ['test/sum.test.js > sum adds two numbers', 'test/legacy.test.js > sum adds two numbers'],
  };

  test('go to a person before any maker; the amended contract is resolved again, then the loop runs', async () => {
    const input = loopInput();
    await loops.run(
      { iterations: [{}], ambiguousTests: [[SHARED]] },
      input,
      async ({ handle, activities, awaitingDecision, decide, state }) => {
        await awaitingDecision();
        expect(activities.calls.map((c) => c.activity)).toEqual([
          'prepareWorkspace',
          'freezeContract',
          'resolveAcceptanceTests',
          'recordContractApproval',
          'recordProgress',
        ]);
        expect(activities.inputsOf('resolveAcceptanceTests')).toEqual([
          { loopId: input.loopId, contractVersion: 1, gates: expect.any(Array) },
        ]);
        expect(activities.inputsOf('recordContractApproval')).toEqual([
          { loopId: input.loopId, escalationSequence: 1, contractVersion: 1, ambiguousTests: [SHARED] },
        ]);
        expect(await state()).toMatchObject({
          sequence: 0,
          awaitingDecision: { escalationSequence: 1, trigger: 'CONTRACT_APPROVAL' },
        });

        const qualified = 'test/sum.test.js > sum adds two numbers';
        await decide({
          kind: 'amend',
          actor: ALICE,
          contract: {
            acceptanceCriteria: [
              { id: 'AC-1', statement: 'sum adds', verification: { type: 'test', name: qualified } },
              { id: 'AC-2', statement: 'the suite passes', verification: { type: 'gate', gate: 'tests' } },
            ],
          },
          ticket: TICKET,
        });
        await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
        expect(activities.inputsOf('resolveAcceptanceTests').map((r) => r.contractVersion)).toEqual([1, 2]);
        expect(activities.inputsOf('runMaker')).toEqual([expect.objectContaining({ sequence: 1, contractVersion: 2 })]);
      },
    );
  });

  test('a rejected contract ends the loop before any maker; an approved one starts it as it is', async () => {
    await loops.run(
      { iterations: [], ambiguousTests: [[SHARED]] },
      loopInput(),
      async ({ handle, activities, awaitingDecision, decide }) => {
        await awaitingDecision();
        await decide({ kind: 'reject', actor: ALICE, ticket: TICKET });
        await expect(handle.result()).resolves.toEqual({ status: 'REJECTED', iterations: 0, reportId: null });
        expect(activities.inputsOf('runMaker')).toEqual([]);
      },
    );
    await loops.run(
      { iterations: [{}], ambiguousTests: [[SHARED]] },
      loopInput(),
      async ({ handle, activities, awaitingDecision, decide }) => {
        await awaitingDecision();
        await decide({ kind: 'approve', actor: ALICE, ticket: TICKET });
        await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 1 });
        expect(activities.inputsOf('resolveAcceptanceTests')).toHaveLength(1);
        expect(activities.inputsOf('runMaker')).toEqual([expect.objectContaining({ contractVersion: 1 })]);
      },
    );
  });

  test('a contract naming no test, or a plan without a tests gate, resolves nothing', async () => {
    await loops.run(
      { iterations: [{}] },
      loopInput({
        contract: {
          objective: 'Make sum() add its two arguments.',
          outcome: 'Callers get the arithmetic sum.',
          acceptanceCriteria: [
            { id: 'AC-1', statement: 'the suite passes', verification: { type: 'gate', gate: 'tests' } },
          ],
        },
      }),
      async ({ handle, activities }) => {
        await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED' });
        expect(activities.inputsOf('resolveAcceptanceTests')).toEqual([]);
      },
    );
  });
});

describe('decision deadline', () => {
  const HOUR = 3600;
  const DEADLINE_ACTOR = 'system:decision-deadline';

  test('with nobody deciding, the default reject applies once the deadline passed', async () => {
    const input = loopInput({ maxIterations: 1, escalation: { decisionDeadlineSeconds: HOUR } });
    await loops.run({ iterations: [failingFirst] }, input, async ({ handle, activities, awaitingDecision }) => {
      await awaitingDecision();
      const waitingSince = await loops.now();

      await expect(handle.result()).resolves.toEqual({ status: 'REJECTED', iterations: 1, reportId: null });
      expect((await loops.now()) - waitingSince).toBeGreaterThanOrEqual(HOUR * 1000);
      expect(activities.inputsOf('authorizeDecision')).toEqual([]);
      expect(activities.inputsOf('recordDecision')).toEqual([
        {
          loopId: input.loopId,
          escalationSequence: 1,
          decision: { kind: 'reject', actor: DEADLINE_ACTOR, comment: `no decision within ${HOUR} s` },
        },
      ]);
    });
  });

  test('the default approve delivers once the deadline passed', async () => {
    const input = loopInput({
      maxIterations: 1,
      escalation: { decisionDeadlineSeconds: HOUR, defaultDecision: 'approve' },
    });
    await loops.run({ iterations: [failingFirst] }, input, async ({ handle, activities }) => {
      await expect(handle.result()).resolves.toMatchObject({ status: 'APPROVED', iterations: 1 });
      expect(activities.inputsOf('recordDecision')[0]!.decision).toEqual({
        kind: 'approve',
        actor: DEADLINE_ACTOR,
        comment: `no decision within ${HOUR} s`,
      });
      expect(activities.inputsOf('deliver')).toEqual([
        expect.objectContaining({ outcome: 'APPROVED_BY_HUMAN', approvedBy: DEADLINE_ACTOR }),
      ]);
    });
  });

  test('the default approve never applies to an escalation with a system BLOCKER finding: it rejects', async () => {
    const input = loopInput({
      maxIterations: 1,
      escalation: { decisionDeadlineSeconds: HOUR, defaultDecision: 'approve' },
    });
    // The gates pass, but the maker's checkpoint removed a test assertion.
    await loops.run(
      { iterations: [{ maker: { inspected: [systemBlocker()] } }] },
      input,
      async ({ handle, activities }) => {
        await expect(handle.result()).resolves.toMatchObject({ status: 'REJECTED', iterations: 1 });
        expect(activities.inputsOf('recordVerdict')[0]!.report).toMatchObject({
          verdict: 'ESCALATE',
          trigger: 'MAX_ITERATIONS',
          findingTriage: [{ findingId: 'TMP-001', outcome: 'BLOCKING' }],
        });
        expect(activities.inputsOf('recordDecision')[0]!.decision).toEqual({
          kind: 'reject',
          actor: DEADLINE_ACTOR,
          comment: `no decision within ${HOUR} s; the default approve does not apply to 1 system BLOCKER finding(s) (tampering or out-of-scope changes)`,
        });
        expect(activities.delivered).toEqual([]);
      },
    );
  });

  test('a decision before the deadline is the one acted on', async () => {
    const input = loopInput({
      maxIterations: 1,
      escalation: { decisionDeadlineSeconds: HOUR, defaultDecision: 'approve' },
    });
    await loops.run({ iterations: [failingFirst] }, input, async ({ handle, activities, awaitingDecision, decide }) => {
      await awaitingDecision();
      await decide({ kind: 'reject', actor: ALICE, ticket: TICKET });
      await expect(handle.result()).resolves.toMatchObject({ status: 'REJECTED' });
      expect(activities.inputsOf('recordDecision').map((d) => d.decision.actor)).toEqual([ALICE]);
    });
  });
});
