import { PRESET_BACKENDS } from '../../domain/maker-presets';
import {
  CORRECT_SUM,
  WRONG_SUM,
  createFixtureRepo,
  makerPrompts,
  makerRuns,
  scriptedMaker,
} from '../support/fixture-repo';
import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import { recordHistory } from '../support/histories';
import { loopStateQuery } from '../../workflows/messages';
import { LoopIterationKey, LoopPhaseKey, LoopStatusKey, LoopVerdictKey } from '../../workflows/search-attributes';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { processesMatching, waitUntilNoProcessMatching } from '../support/processes';

// The whole loop through HTTP: real API, Temporal dev server, worker process, PostgreSQL, git, subprocesses
// and a Chat Completions endpoint with scripted answers.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

test('a failing gate is fixed in iteration 2, the review is clean → PASS, with evidence and report through the API', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: { '1': { write: { 'src/sum.js': WRONG_SUM } }, '2': { write: { 'src/sum.js': CORRECT_SUM } } },
  });
  h.llm.enqueue({ content: cleanLedger });

  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  expect(submitted.status).toBe(201);
  expect(submitted.body.workflowId).toBe(`loop-${submitted.body.id}`);
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);

  expect(loop.status).toBe('PASSED');
  expect(makerRuns(maker.stateDir)).toEqual([1, 2]);
  expect(loop.iterations.map((i: any) => [i.sequence, i.roundIteration, i.verdict.verdict])).toEqual([
    [1, 1, 'ITERATE'],
    [2, 2, 'PASS'],
  ]);
  const [first, second] = loop.iterations;
  // The base run, once per loop: in the first verification, before the maker's gates.
  expect(first.evidence.map((e: any) => [e.gate, e.status])).toEqual([
    ['tests:base', 'FAILED'],
    ['tests', 'FAILED'],
  ]);
  expect(second.evidence.map((e: any) => e.gate)).toEqual(['tests', 'tests:differential']);
  const firstTests = first.evidence[1];
  expect(firstTests).toMatchObject({
    gate: 'tests',
    status: 'FAILED',
    exitCode: 1,
    testCounts: { passed: 0, failed: 2 },
  });
  expect(first.verdict.directives[0]).toMatch(/^1\. Fix the failing tests gate/);
  expect(second.evidence[0]).toMatchObject({
    gate: 'tests',
    status: 'PASSED',
    exitCode: 0,
    testCounts: { passed: 2, failed: 0, skipped: 0 },
  });
  expect(second.evidence[0].assertionEvidence).toEqual(['AC-1', 'AC-2']);
  expect(second.changedFiles).toEqual(['src/sum.js']);
  // The second maker prompt carries the judge's numbered directives.
  expect(makerPrompts(maker.stateDir)[1]).toContain('1. Fix the failing tests gate');

  const evidence = await h.request('GET', `/v1/loops/${loop.id}/evidence/${firstTests.id}`);
  expect(evidence.status).toBe(200);
  expect(`${evidence.body.stdout}${evidence.body.stderr}`).toContain('sum adds two numbers');
  // The tests gate ran with a JUnit report added (test-reporter.ts); the API names the failed tests.
  expect(evidence.body.command).toEqual([
    'node',
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=junit',
    expect.stringMatching(/^--test-reporter-destination=\/.+\/junit\.xml$/),
  ]);
  expect(evidence.body).toMatchObject({
    passedTests: [],
    failedTests: ['sum adds two numbers', 'sum handles negatives'],
  });
  expect(evidence.body.pid).toEqual(expect.any(Number));
  expect(evidence.body.stdoutSha256).toMatch(/^[0-9a-f]{64}$/);

  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.status).toBe(200);
  expect(report.body.kind).toBe('FINAL');
  expect(report.body.body.outcome).toBe('PASSED');
  expect(report.body.body.commits).toHaveLength(2);
  expect(report.body.markdown).toContain('independent model call (model scripted-reviewer, response id chatcmpl-');
  expect(report.body.markdown).toContain('| AC-1 | sum adds two numbers | PROVEN |');
  // The change touched code inside an existing module, and nothing landed on main meanwhile (issue 28).
  expect(report.body.body.contextImpact).toEqual({ level: 'NONE', reasons: [] });
  expect(report.body.body.baseDrift).toMatchObject({ baseRef: 'main', behind: 0, conflicts: [], problem: null });
  expect(report.body.markdown).toContain('### Context impact: NONE');
  expect(report.body.markdown).toContain('- base: `main` has not moved since the loop started');
  // Every loop says how its commands were confined.
  expect(loop.sandbox).toBe('bwrap');
  expect(report.body.markdown).toContain('- sandbox: bubblewrap');
  // The reviewer saw the contract and the diff, and only once: review does not run while a gate fails.
  expect(h.llm.requests).toHaveLength(1);
  expect(h.llm.requests[0]!.authorization).toBe('Bearer test-key');
  expect(h.llm.requests[0]!.body.messages[1]!.content).toContain('+exports.sum = (a, b) => a + b;');
  expect(h.llm.requests[0]!.body.messages[1]!.content).not.toContain('scripted maker');

  const listed = await h.request('GET', '/v1/loops?status=PASSED');
  expect(listed.body.loops.map((l: any) => l.id)).toContain(loop.id);

  // What people see in the Temporal Web UI: current search attributes and activity summaries.
  const handle = h.temporal.workflow.getHandle(loop.workflowId);
  const described = await handle.describe();
  expect(described.typedSearchAttributes.get(LoopStatusKey)).toBe('PASSED');
  expect(described.typedSearchAttributes.get(LoopPhaseKey)).toBe('DONE');
  expect(described.typedSearchAttributes.get(LoopVerdictKey)).toBe('PASS');
  expect(described.typedSearchAttributes.get(LoopIterationKey)).toBe(2);
  expect(await described.staticSummary()).toBe(`Loop ${loop.id}: Make sum() add its two arguments.`);
  expect(await described.staticDetails()).toContain('- AC-1: sum adds two numbers');
  expect((await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata')).currentDetails).toBe(
    '**PASSED** · phase DONE · iteration 2 of 3 · last verdict PASS',
  );
  const summaries = await activitySummaries(handle);
  expect(summaries).toEqual(
    expect.arrayContaining([
      // The maker's activity verifies its checkpoint, and reviews it once its gates passed.
      'maker, then verify · iteration 1 of 3 (#1)',
      'maker, then verify · iteration 2 of 3 (#2)',
      // Nothing stood in the way of the passed change: the delivery's preparation delivered it.
      'prepare delivery, then deliver',
    ]),
  );
  expect(summaries).not.toContain('deliver');
  recordHistory(loop.workflowId, 'fix-gate-then-pass');
  recordHistory(loop.workflowId, 'review-in-verification-fix-gate-then-pass');
  recordHistory(loop.workflowId, 'verify-in-maker-fix-gate-then-pass');
  recordHistory(loop.workflowId, 'deliver-when-prepared-fix-gate-then-pass');
});

test('a persistent VALID BLOCKER escalates at max iterations; retry with guidance resumes at K=1 and passes', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: {
      '1': { write: { 'src/sum.js': CORRECT_SUM } },
      '2': { write: { 'src/sum.js': `// checked\n${CORRECT_SUM}` } },
      '3': { write: { 'src/sum.js': 'exports.sum = (a, b) => Number(BigInt(a) + BigInt(b));\n' } },
    },
  });
  h.llm.enqueue({ content: blockerLedger() }, { content: blockerLedger() }, { content: cleanLedger });

  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 2 }));
  const escalated = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(escalated.status).toBe('AWAITING_DECISION');
  expect(escalated.escalations).toEqual([
    expect.objectContaining({ sequence: 1, trigger: 'MAX_ITERATIONS', status: 'OPEN' }),
  ]);
  expect(escalated.iterations.map((i: any) => i.verdict.verdict)).toEqual(['ITERATE', 'ESCALATE']);
  // The Temporal UI says what a person must do.
  const metadata = await h.temporal.workflow
    .getHandle(escalated.workflowId)
    .query<{ currentDetails: string }>('__temporal_workflow_metadata');
  expect(metadata.currentDetails).toContain(
    `Waiting for a person: decide escalation #1 (approve, reject, retry or amend) in the inbox or with POST /v1/loops/${escalated.id}/decisions.`,
  );

  const report = await h.request('GET', `/v1/loops/${escalated.id}/report`);
  expect(report.body.kind).toBe('ESCALATION');
  expect(report.body.body.openFindings).toEqual([
    expect.objectContaining({ findingId: 'COR-001', severity: 'BLOCKER' }),
  ]);
  expect(report.body.body.options.map((o: any) => o.decision)).toEqual(['retry', 'approve', 'amend', 'reject']);
  expect(report.body.markdown).toContain('## 6. Workspace');

  const state = await h.temporal.workflow.getHandle(escalated.workflowId).query(loopStateQuery);
  expect(state).toMatchObject({
    status: 'AWAITING_DECISION',
    roundIteration: 2,
    maxIterations: 2,
    awaitingDecision: { trigger: 'MAX_ITERATIONS' },
  });

  const decided = await h.request(
    'POST',
    `/v1/loops/${escalated.id}/decisions`,
    { kind: 'retry', guidance: 'Use BigInt so large integers stay exact.', escalationId: escalated.escalations[0].id },
    { authorization: `Bearer ${h.keys.approver}` },
  );
  expect(decided.status).toBe(202);

  const loop = await h.waitForLoop(escalated.id, ['PASSED', 'FAILED', 'REJECTED']);
  expect(loop.status).toBe('PASSED');
  expect(loop.iterations.map((i: any) => [i.sequence, i.roundIteration, i.contractVersion, i.verdict.verdict])).toEqual(
    [
      [1, 1, 1, 'ITERATE'],
      [2, 2, 1, 'ESCALATE'],
      [3, 1, 2, 'PASS'],
    ],
  );
  expect(loop.contractVersions).toHaveLength(2);
  expect(loop.contractVersions[1].contract.constraints).toContain(
    'Human guidance: Use BigInt so large integers stay exact.',
  );
  expect(loop.contractVersions[1].hash).not.toBe(loop.contractVersions[0].hash);
  expect(loop.escalations[0].decision).toMatchObject({
    kind: 'retry',
    actor: expect.stringMatching(/^ana \(key [0-9a-f-]{36}\)$/),
  });
  expect(makerPrompts(maker.stateDir)[2]).toContain('Human guidance: Use BigInt so large integers stay exact.');
  recordHistory(loop.workflowId, 'escalate-retry-pass');
});

test('ESCALATE → approve delivers the checkpoint as a human override', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: blockerLedger() });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
  const escalated = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION']);
  const decision = { kind: 'approve', comment: 'acceptable risk', escalationId: escalated.escalations[0].id };
  expect((await h.request('POST', `/v1/loops/${submitted.body.id}/decisions`, decision)).status).toBe(202);

  const loop = await h.waitForLoop(submitted.body.id, ['APPROVED']);
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.kind).toBe('FINAL');
  expect(report.body.body).toMatchObject({
    outcome: 'APPROVED_BY_HUMAN',
    approvedBy: expect.stringMatching(/^test-admin \(key /),
    checkpointCommit: loop.iterations[0].checkpointCommit,
  });
  expect(report.body.markdown).toMatch(/approved by test-admin \(key [0-9a-f-]{36}\) \(human override\)/);
  recordHistory(loop.workflowId, 'escalate-approve');
});

test('ESCALATE → reject ends the loop REJECTED; a second decision gets 409', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: blockerLedger() });

  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
  const escalated = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION']);
  const escalationId = escalated.escalations[0].id;
  const rejected = await h.request('POST', `/v1/loops/${submitted.body.id}/decisions`, {
    kind: 'reject',
    comment: 'not worth it',
    escalationId,
  });
  expect(rejected.status).toBe(202);
  const again = await h.request('POST', `/v1/loops/${submitted.body.id}/decisions`, { kind: 'approve', escalationId });
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ statusCode: 409, error: 'Conflict', requestId: expect.any(String) });

  const loop = await h.waitForLoop(submitted.body.id, ['REJECTED']);
  expect(loop.escalations[0]).toMatchObject({
    status: 'DECIDED',
    decision: { kind: 'reject', comment: 'not worth it' },
  });
  expect((await h.request('POST', `/v1/loops/${loop.id}/decisions`, { kind: 'approve', escalationId })).status).toBe(
    409,
  );
  recordHistory(loop.workflowId, 'escalate-reject');
});

test('an invalid ledger is re-asked with its validation errors; still invalid after the repairs → ESCALATE, never a crash', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const requestsBefore = h.llm.requests.length;
  h.llm.enqueue(
    { content: 'Looks great to me!' },
    { content: '{"findings": [{"id": "X"}]}' },
    { content: '{"findings": "none"}' },
  );

  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('AWAITING_DECISION');
  expect(loop.escalations[0].trigger).toBe('REVIEW_UNAVAILABLE');
  const calls = h.llm.requests.slice(requestsBefore);
  // One question and two repairs (REVIEW_REPAIR_ATTEMPTS=2), each carrying the previous answer's errors.
  expect(calls).toHaveLength(3);
  expect(calls[1]!.body.messages.at(-1)!.content).toContain('the answer is not JSON');
  expect(calls[2]!.body.messages.at(-1)!.content).toContain('findings.0.id: must look like COR-001');
  const records = await h.db.prisma.executionRecord.findMany({
    where: { loopId: loop.id, role: 'reviewer' },
    orderBy: { createdAt: 'asc' },
  });
  expect(records.map((r) => r.outcome)).toEqual(['INVALID_LEDGER', 'INVALID_LEDGER', 'INVALID_LEDGER']);
  expect(records.every((r) => r.responseId?.startsWith('chatcmpl-') && r.promptTokens! > 0)).toBe(true);
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.body.coreBlocker).toContain('still invalid after 2 repair attempt(s)');
});

test('a ledger repaired on the second answer is accepted', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: '```json\n{"findings": [{"id": "COR-1"}]}\n```' }, { content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('PASSED');
  const records = await h.db.prisma.executionRecord.findMany({
    where: { loopId: loop.id },
    orderBy: { createdAt: 'asc' },
  });
  expect(records.map((r) => [r.role, r.kind, r.outcome])).toEqual([
    ['maker', 'AGENT_PROCESS', 'EXIT_0'],
    ['reviewer', 'MODEL_CALL', 'INVALID_LEDGER'],
    ['reviewer', 'MODEL_CALL', 'VALID_LEDGER'],
  ]);
  expect(records[0]!.pid).toEqual(expect.any(Number));
});

test('a reviewer whose provider answers 503 waits, saying so on the loop, and passes once it answers', async () => {
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  // The first 503 ends the review in the maker's activity; the review activity meets the second.
  h.llm.enqueue({ status: 503 }, { status: 503 }, { content: cleanLedger, hold: answered });
  const id = await h.submit(loopRequest(createFixtureRepo(), maker.argv));
  let loop: any;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline && !loop?.waiting;)
    loop = await new Promise((r) => setTimeout(r, 100)).then(
      async () => (await h.request('GET', `/v1/loops/${id}`)).body,
    );
  expect(loop.waiting).toEqual({
    reason: expect.stringMatching(/^the model provider \(runReview, attempt 1; retried until it answers\): .*503/),
    since: expect.any(String),
  });
  expect(loop.status).toBe('RUNNING');
  // The timeline, and the event stream with it, say the same.
  const timeline = await h.request('GET', `/v1/loops/${id}/timeline`);
  expect(timeline.body.events.filter((e: any) => e.kind === 'waiting')).toEqual([
    expect.objectContaining({
      title: expect.stringMatching(/^Waiting for the model provider \(runReview, attempt \d/),
    }),
  ]);
  answer();
  const passed = await h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect([passed.status, passed.waiting]).toEqual(['PASSED', null]);
  recordHistory(passed.workflowId, 'review-activity-after-provider-outage');
  recordHistory(passed.workflowId, 'review-activity-after-outage-in-maker-activity');
});

test('triage checks a blocking claim against the repository; a refuted claim is dismissed with its counter-evidence', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: blockerLedger('sum() ignores its second argument') });
  h.llm.enqueueTriage({
    content: JSON.stringify({
      decisions: [
        {
          findingId: 'COR-001',
          validity: 'INVALID',
          reasoning: 'line 1 adds both arguments',
          counterEvidence: '1: exports.sum = (a, b) => a + b;',
        },
      ],
    }),
  });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  const finding = await h.db.prisma.finding.findFirstOrThrow({ where: { loopId: loop.id, findingId: 'COR-001' } });
  expect(finding).toMatchObject({
    claimedValidity: 'VALID',
    validity: 'INVALID',
    triageCounterEvidence: '1: exports.sum = (a, b) => a + b;',
  });
  const triageCall = h.llm.requests.find((r) => r.body.messages[0]!.content.startsWith('You triage'))!;
  expect(triageCall.body.messages[1]!.content).toContain('1: exports.sum = (a, b) => a + b;');
  const roles = await h.db.prisma.executionRecord.findMany({
    where: { loopId: loop.id },
    orderBy: { createdAt: 'asc' },
    select: { role: true, outcome: true },
  });
  expect(roles).toEqual([
    { role: 'maker', outcome: 'EXIT_0' },
    { role: 'reviewer', outcome: 'VALID_LEDGER' },
    { role: 'triage', outcome: 'VALID_TRIAGE' },
  ]);
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.markdown).toMatch(/### Dismissed findings[\s\S]*COR-001/);
});

test('a BLOCKER the reviewer calls INVALID stays VALID when triage answers nothing about it, or cites code that is not there', async () => {
  const invalidClaim = (title: string) => {
    const ledger = JSON.parse(blockerLedger(title));
    ledger.findings[0].validity = 'INVALID';
    return JSON.stringify(ledger);
  };
  const run = async (triage: object) => {
    const repo = createFixtureRepo();
    const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
    h.llm.enqueue({ content: invalidClaim('sum() drops the second argument') });
    h.llm.enqueueTriage({ content: JSON.stringify(triage) });
    const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
    const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
    const finding = await h.db.prisma.finding.findFirstOrThrow({ where: { loopId: loop.id, findingId: 'COR-001' } });
    return { loop, finding };
  };

  const silent = await run({ decisions: [] });
  expect(silent.loop.status).toBe('AWAITING_DECISION');
  expect(silent.finding).toMatchObject({ claimedValidity: 'INVALID', validity: 'VALID', triageCounterEvidence: null });
  expect(silent.finding.triageReasoning).toContain('no decision');

  const madeUp = await run({
    decisions: [
      {
        findingId: 'COR-001',
        validity: 'INVALID',
        reasoning: 'it is fine',
        counterEvidence: 'exports.sum = (a, b) => Number(a) + Number(b);',
      },
    ],
  });
  expect(madeUp.loop.status).toBe('AWAITING_DECISION');
  expect(madeUp.finding).toMatchObject({ claimedValidity: 'INVALID', validity: 'VALID' });
  expect(madeUp.finding.triageReasoning).toContain('quotes nothing from the code');
});

test('invalid submissions get 400 naming the field, and start no workflow', async () => {
  const repo = createFixtureRepo();
  const valid = loopRequest(repo, ['true']);
  const before = await h.db.prisma.loop.count();
  const cases: Array<[unknown, string]> = [
    [{ ...valid, contract: { ...valid.contract, acceptanceCriteria: [] } }, 'body.contract.acceptanceCriteria'],
    [{ ...valid, maxIterations: 9 }, 'body.maxIterations'],
    [{ ...valid, surprise: true }, 'body.surprise'],
  ];
  for (const [body, field] of cases) {
    const res = await h.request('POST', '/v1/loops', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', requestId: expect.any(String) });
    expect(res.body.message).toContain(field);
  }
  expect(await h.db.prisma.loop.count()).toBe(before);
});

test('the same Idempotency-Key returns the same loop; a different body with it is a conflict', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const body = loopRequest(repo, maker.argv);
  const first = await h.request('POST', '/v1/loops', body, { 'idempotency-key': 'task-42' });
  const second = await h.request('POST', '/v1/loops', body, { 'idempotency-key': 'task-42' });
  expect([first.status, second.status]).toEqual([201, 200]);
  expect(second.body.id).toBe(first.body.id);
  const conflicting = await h.request(
    'POST',
    '/v1/loops',
    { ...body, maxIterations: 1 },
    { 'idempotency-key': 'task-42' },
  );
  expect(conflicting.status).toBe(409);
  await h.waitForLoop(first.body.id, ['PASSED']);
});

test('cancelling a loop that waits for a decision closes its escalation: no inbox lists it any more', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': WRONG_SUM } } } });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
  const escalated = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(escalated.status).toBe('AWAITING_DECISION');
  const open = (await h.request('GET', '/v1/escalations')).body;
  expect(JSON.stringify(open)).toContain(escalated.id);

  expect((await h.request('POST', `/v1/loops/${escalated.id}/cancel`)).status).toBe(202);
  const cancelled = await h.waitForLoop(escalated.id, ['CANCELLED']);
  expect(cancelled.escalations.map((e: any) => e.status)).toEqual(['CANCELLED']);
  expect(JSON.stringify((await h.request('GET', '/v1/escalations')).body)).not.toContain(escalated.id);
});

test('cancelling a loop stops its running maker and records it as CANCELLED', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: {}, hangOnce: [1] });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await waitFor(async () => {
    const l = (await h.request('GET', `/v1/loops/${submitted.body.id}`)).body;
    return l.phase === 'MAKER' && makerRuns(maker.stateDir).length === 1 ? l : null;
  });
  // The maker runs in its own pid namespace: find it on the host by its script path.
  expect(processesMatching(maker.stateDir)).not.toEqual([]);
  expect((await h.request('POST', `/v1/loops/${loop.id}/cancel`)).status).toBe(202);
  const cancelled = await h.waitForLoop(loop.id, ['CANCELLED']);
  expect(cancelled.finishedAt).not.toBeNull();
  await waitUntilNoProcessMatching(maker.stateDir);
  expect((await h.request('POST', `/v1/loops/${loop.id}/cancel`)).status).toBe(409);
  recordHistory(loop.workflowId, 'cancelled');
});

test('access control: no key 401, wrong role 403, right role accepted; health, docs and the inbox page are public', async () => {
  const repo = createFixtureRepo();
  const body = loopRequest(repo, ['true']);
  const as = (key: string) => ({ authorization: key ? `Bearer ${key}` : '' });
  const noKey = await h.request('POST', '/v1/loops', body, as(''));
  expect(noKey).toMatchObject({
    status: 401,
    body: { statusCode: 401, error: 'Unauthorized', requestId: expect.any(String) },
  });
  expect((await h.request('GET', '/v1/loops', undefined, as('elk_not-a-real-key'))).status).toBe(401);
  // An approver may decide but not submit; a submitter may submit but not decide.
  expect((await h.request('POST', '/v1/loops', body, as(h.keys.approver))).status).toBe(403);
  const unknown = '00000000-0000-4000-8000-000000000000';
  const approve = { kind: 'approve', escalationId: unknown };
  expect((await h.request('POST', `/v1/loops/${unknown}/decisions`, approve, as(h.keys.submitter))).status).toBe(403);
  expect((await h.request('POST', `/v1/loops/${unknown}/decisions`, approve, as(h.keys.approver))).status).toBe(404);
  expect((await h.request('GET', '/v1/loops', undefined, as(h.keys.submitter))).status).toBe(200);
  // A body cannot claim to be someone else: the actor comes from the key.
  expect(
    (await h.request('POST', `/v1/loops/${unknown}/decisions`, { ...approve, actor: 'the-boss' }, as(h.keys.approver)))
      .status,
  ).toBe(400);
  for (const open of ['/healthz', '/docs/json', '/inbox'])
    expect((await fetch(`${h.baseUrl}${open}`)).status).toBe(200);
});

test('unknown loops are 404 and /healthz checks PostgreSQL and Temporal', async () => {
  const unknown = '00000000-0000-4000-8000-000000000000';
  expect((await h.request('GET', `/v1/loops/${unknown}`)).status).toBe(404);
  expect(
    (await h.request('POST', `/v1/loops/${unknown}/decisions`, { kind: 'approve', escalationId: unknown })).status,
  ).toBe(404);
  const health = await h.request('GET', '/healthz');
  expect(health).toEqual({
    status: 200,
    body: {
      status: 'ok',
      checks: { postgres: { ok: true }, temporal: { ok: true } },
      sandbox: { mode: 'bwrap', confined: true, note: expect.any(String), limits: null },
      // This harness's API is not told where the CLIs are installed, and nothing was checked.
      agents: PRESET_BACKENDS.map((backend) => ({ backend, installedVersion: null, lastCheck: null })),
      // No supervisor started this API (npm start's does: its dependencies' states).
      service: null,
    },
  });
  const docs = await fetch(`${h.baseUrl}/docs/json`);
  expect(((await docs.json()) as any).paths).toHaveProperty('/v1/loops/{id}/decisions');
});

/** The summaries the Web UI shows for each scheduled activity. */
async function activitySummaries(
  handle: ReturnType<LoopHarness['temporal']['workflow']['getHandle']>,
): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes)
    .map((e) => {
      const data = e.userMetadata?.summary?.data;
      return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as string) : '';
    });
}

async function waitFor<T>(check: () => Promise<T | null>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('condition not reached in time');
}
