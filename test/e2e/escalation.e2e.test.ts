import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import {
  CORRECT_SUM,
  WRONG_SUM,
  createFixtureRepo,
  makerPrompts,
  makerRuns,
  scriptedMaker,
} from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { recordHistory } from '../support/histories';
import { loopRequest } from '../support/loop-request';

// The human side: decisions answered synchronously by the workflow, amend, deadlines, the contract
// approval gate, budgets and what agents themselves escalate.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

async function escalatedLoop(overrides: Parameters<typeof loopRequest>[2] = {}) {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: {
      '1': { write: { 'src/sum.js': CORRECT_SUM } },
      '2': { write: { 'src/sum.js': `// amended\n${CORRECT_SUM}` } },
    },
  });
  h.llm.enqueue({ content: blockerLedger() });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, { maxIterations: 1, ...overrides }),
  );
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('AWAITING_DECISION');
  return { loop, maker };
}

test('amend: a new contract version, the iteration count restarts, and the loop resumes in a new run', async () => {
  const { loop } = await escalatedLoop();
  const escalationId = loop.escalations[0].id;
  const invalid = await h.request('POST', `/v1/loops/${loop.id}/decisions`, {
    kind: 'amend',
    contract: { acceptanceCriteria: [] },
    escalationId,
  });
  expect(invalid.status).toBe(422);
  expect(invalid.body.message).toContain('contract.acceptanceCriteria');

  const firstRun = (await h.temporal.workflow.getHandle(loop.workflowId).describe()).runId;
  h.llm.enqueue({ content: cleanLedger });
  const amended = await h.request('POST', `/v1/loops/${loop.id}/decisions`, {
    kind: 'amend',
    contract: { constraints: ['Keep sum() a one-liner.'] },
    comment: 'the precision finding is out of scope',
    escalationId,
  });
  expect(amended.status).toBe(202);
  const done = await h.waitForLoop(loop.id, ['PASSED', 'FAILED', 'REJECTED']);
  expect(done.status).toBe('PASSED');
  expect(done.contractVersions.map((c: any) => [c.version, c.contract.constraints])).toEqual([
    [1, ['Do not change the tests.']],
    [2, ['Keep sum() a one-liner.']],
  ]);
  expect(done.iterations.map((i: any) => [i.sequence, i.roundIteration, i.contractVersion])).toEqual([
    [1, 1, 1],
    [2, 1, 2],
  ]);
  expect(done.escalations[0].decision).toMatchObject({
    kind: 'amend',
    comment: 'the precision finding is out of scope',
  });
  // Continue-as-new at the round boundary keeps each run's history bounded.
  const latest = await h.temporal.workflow.getHandle(loop.workflowId).describe();
  expect(latest.runId).not.toBe(firstRun);
  // The new run starts saying RUNNING in the Web UI's columns, not the AWAITING_DECISION it was carried over from.
  const history = await h.temporal.workflow.getHandle(loop.workflowId, latest.runId).fetchHistory();
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!.searchAttributes!.indexedFields!;
  const attribute = (name: string) => JSON.parse(Buffer.from(started[name]!.data!).toString('utf8'));
  expect([attribute('LoopStatus'), attribute('LoopPhase'), attribute('LoopIteration')]).toEqual([
    'RUNNING',
    'CONTRACT',
    1,
  ]);
  expect(attribute('LoopRepo')).toEqual(expect.any(String));
  recordHistory(loop.workflowId, 'amend-continue-as-new', firstRun);
  recordHistory(loop.workflowId, 'amend-resumed-run-passes', latest.runId);
  // The resumed run claims the loop's run binding first (activities/run-binding.ts).
  recordHistory(loop.workflowId, 'claimed-resumed-run-passes', latest.runId);
});

test('a decision deadline applies the configured default on a durable timer; approve is not a default the operator allows', async () => {
  const approving = loopRequest(createFixtureRepo(), ['true'], {
    escalation: { decisionDeadlineSeconds: 1, defaultDecision: 'approve' },
  });
  expect(await h.request('POST', '/v1/loops', approving)).toMatchObject({
    status: 400,
    body: {
      message: expect.stringMatching(
        /^body\.escalation\.defaultDecision: the operator does not allow a decision deadline to approve/,
      ),
    },
  });
  const { loop } = await escalatedLoop({ escalation: { decisionDeadlineSeconds: 2, defaultDecision: 'reject' } });
  const done = await h.waitForLoop(loop.id, ['REJECTED', 'PASSED', 'APPROVED']);
  expect(done.status).toBe('REJECTED');
  expect(done.escalations[0].decision).toMatchObject({ kind: 'reject', actor: 'system:decision-deadline' });
  recordHistory(loop.workflowId, 'deadline-default-reject');
});

test('the contract approval gate: the maker does not start until a human approves the contract', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, { requireContractApproval: true }),
  );
  const waiting = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION']);
  expect(waiting.escalations).toEqual([expect.objectContaining({ trigger: 'CONTRACT_APPROVAL', status: 'OPEN' })]);
  expect(waiting.iterations).toEqual([]);
  expect(makerRuns(maker.stateDir)).toEqual([]);
  const report = await h.request('GET', `/v1/loops/${waiting.id}/report`);
  expect(report.body.markdown).toContain('must be approved before the maker starts');

  h.llm.enqueue({ content: cleanLedger });
  expect(
    (
      await h.request('POST', `/v1/loops/${waiting.id}/decisions`, {
        kind: 'approve',
        escalationId: waiting.escalations[0].id,
      })
    ).status,
  ).toBe(202);
  const done = await h.waitForLoop(waiting.id, ['PASSED', 'FAILED', 'REJECTED']);
  expect(done.status).toBe('PASSED');
  expect(makerRuns(maker.stateDir)).toEqual([1]);
  recordHistory(done.workflowId, 'contract-approval-then-pass');
});

test('pause and resume over REST: a loop paused at its contract approval holds before its first maker until resumed', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, { requireContractApproval: true }),
  );
  const waiting = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION']);
  const submitter = { authorization: `Bearer ${h.keys.submitter}` };

  const refused = await h.request('POST', `/v1/loops/${waiting.id}/pause`, { reason: 'x'.repeat(2001) }, submitter);
  expect(refused.status).toBe(400);
  expect(refused.body.message).toContain('reason');
  const paused = await h.request('POST', `/v1/loops/${waiting.id}/pause`, { reason: 'checking the plan' }, submitter);
  expect(paused).toMatchObject({
    status: 202,
    body: { loopId: waiting.id, paused: true, holding: false },
  });

  h.llm.enqueue({ content: cleanLedger });
  const approved = await h.request('POST', `/v1/loops/${waiting.id}/decisions`, {
    kind: 'approve',
    escalationId: waiting.escalations[0].id,
  });
  expect(approved.status).toBe(202);
  const held = await h.waitForLoop(waiting.id, ['PAUSED', 'PASSED', 'FAILED']);
  expect(held).toMatchObject({ status: 'PAUSED', iterations: [] });
  expect(makerRuns(maker.stateDir)).toEqual([]);
  const listed = await h.request('GET', '/v1/loops?status=PAUSED');
  expect(listed.body.loops.map((l: any) => l.id)).toContain(waiting.id);

  const resumed = await h.request('POST', `/v1/loops/${waiting.id}/resume`, undefined, submitter);
  expect(resumed).toMatchObject({ status: 202, body: { paused: false, holding: true } });
  const done = await h.waitForLoop(waiting.id, ['PASSED', 'FAILED', 'REJECTED']);
  expect(done.status).toBe('PASSED');
  expect(makerRuns(maker.stateDir)).toEqual([1]);
  const ended = await h.request('POST', `/v1/loops/${waiting.id}/pause`, {}, submitter);
  expect(ended.status).toBe(409);
  recordHistory(done.workflowId, 'paused-at-contract-then-resumed-pass');
});

test('reaching the token budget escalates with BUDGET_EXHAUSTED instead of iterating on', async () => {
  const { loop } = await escalatedLoop({ maxIterations: 3, budget: { maxTokens: 50 } });
  expect(loop.escalations[0].trigger).toBe('BUDGET_EXHAUSTED');
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.body.coreBlocker).toMatch(/token budget reached: \d+ of 50 tokens used/);
  recordHistory(loop.workflowId, 'budget-exhausted-escalates');
});

test('an agent reporting contradictory requirements escalates even though everything passes', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: {
      '1': {
        write: { 'src/sum.js': CORRECT_SUM },
        report: { kind: 'CONTRADICTION', reason: 'AC-1 and the constraints disagree' },
      },
    },
  });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('AWAITING_DECISION');
  expect(loop.escalations[0].trigger).toBe('AGENT_CONTRADICTION');
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.markdown).toContain('the maker reported contradictory requirements');
  recordHistory(loop.workflowId, 'agent-contradiction-escalates');
});

test('an iteration worse than the best one is undone: the workspace backtracks and the maker gets a recovery brief', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: {
      '1': { write: { 'src/sum.js': CORRECT_SUM } },
      '2': { write: { 'src/sum.js': WRONG_SUM } },
      '3': { write: { 'src/sum.js': 'exports.sum = (a, b) => Number(BigInt(a) + BigInt(b));\n' } },
    },
  });
  h.llm.enqueue({ content: blockerLedger() }, { content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 3 }));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  const [first, second, third] = loop.iterations;
  expect(second.evidence[0].status).toBe('FAILED');
  expect(second.backtrackedTo).toBe(first.checkpointCommit);
  expect(third.startCommit).toBe(first.checkpointCommit);
  expect(makerPrompts(maker.stateDir)[2]).toMatch(
    /Recovery: iteration #2 was worse than #1 \(1 failing gate\(s\) and 0 blocking finding\(s\) against 0 and 1\)/,
  );
  recordHistory(loop.workflowId, 'backtrack-then-pass');
});

test('a maker that exits 0 having changed nothing is recorded as no change, and the loop escalates with NO_CHANGE', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: {} });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.iterations[0]).toMatchObject({ noChange: true, makerExitCode: 0, changedFiles: [] });
  expect(loop.escalations[0].trigger).toBe('NO_CHANGE');
  recordHistory(loop.workflowId, 'no-change-escalates');
});
