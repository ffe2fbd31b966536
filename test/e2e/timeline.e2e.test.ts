import { decisionSignal } from '../../workflows/messages';
import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// A loop's audit timeline and the explanation of its verdicts, through the real API, worker, Temporal
// dev server, PostgreSQL, scripted maker and fake reviewer.

/** What the API records as the actor of a decision made with the harness's approver key (named "ana"). */
const ANA = /^ana \(key [0-9a-f-]{36}\)$/;
const FINDING_TITLE = 'sum() loses precision for large integers';
/** A credential-shaped token in a decision comment: every answer is sanitised on the way out. */
const TOKEN = `ghp_${'A1b2C3d4E5'.repeat(4)}`;

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

async function timeline(id: string) {
  const res = await h.request('GET', `/v1/loops/${id}/timeline`);
  expect(res.status).toBe(200);
  return res.body as { loopId: string; status: string; phase: string; events: TimelineEvent[] };
}

interface TimelineEvent {
  at: string;
  kind: string;
  iteration: number | null;
  title: string;
  durationMs: number | null;
  detail: Record<string, any>;
}

const ofKind = (events: TimelineEvent[], kind: string) => events.filter((e) => e.kind === kind);
/** Phases without SETUP, which comes only when the repository has set-up commands. */
const phasesOf = (events: TimelineEvent[]) => ofKind(events, 'phase').filter((e) => e.detail.phase !== 'SETUP');

function expectSortedByTime(events: TimelineEvent[]): void {
  const times = events.map((e) => Date.parse(e.at));
  expect(times.every((t) => Number.isFinite(t))).toBe(true);
  expect(times).toEqual([...times].sort((a, b) => a - b));
}

test('a loop that iterates once on a BLOCKER, then passes: phases in order with durations, commands, model calls, verdicts and their explanations', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: {
      '1': { write: { 'src/sum.js': CORRECT_SUM } },
      '2': { write: { 'src/sum.js': `// checked\n${CORRECT_SUM}` } },
    },
  });
  h.llm.enqueue({ content: blockerLedger(FINDING_TITLE) }, { content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 3 }));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');

  const t = await timeline(loop.id);
  expect(t).toMatchObject({ loopId: loop.id, status: 'PASSED', phase: 'DONE' });
  expectSortedByTime(t.events);

  // Phases: in order, each with its iteration and how long it lasted (until the next one; the last is open-ended).
  const phases = phasesOf(t.events);
  expect(phases.map((p) => [p.detail.phase, p.iteration])).toEqual([
    ['PREPARING', null],
    ['CONTRACT', null],
    ['MAKER', 1],
    ['VERIFY', 1],
    ['REVIEW', 1],
    ['JUDGE', 1],
    ['MAKER', 2],
    ['VERIFY', 2],
    ['REVIEW', 2],
    ['JUDGE', 2],
    ['DONE', 2],
  ]);
  const allPhases = ofKind(t.events, 'phase');
  expect(allPhases.slice(0, -1).every((p) => Number.isInteger(p.durationMs) && p.durationMs! >= 0)).toBe(true);
  expect(allPhases.at(-1)).toMatchObject({
    title: 'DONE · PASSED',
    durationMs: null,
    detail: { status: 'PASSED', lastVerdict: 'PASS' },
  });
  // Maker and review timings.
  const maker1 = phases.find((p) => p.detail.phase === 'MAKER' && p.iteration === 1)!;
  const review1 = phases.find((p) => p.detail.phase === 'REVIEW' && p.iteration === 1)!;
  expect(maker1.durationMs).toBeGreaterThan(0);
  expect(review1.durationMs).toBeGreaterThan(0);

  expect(ofKind(t.events, 'contract')).toEqual([
    expect.objectContaining({
      iteration: null,
      title: 'Contract v1 frozen (submitted)',
      detail: expect.objectContaining({ version: 1, hash: expect.any(String) }),
    }),
  ]);

  // Each iteration's tests gate, with its command, exit code, counts and duration.
  const commands = ofKind(t.events, 'command').filter((c) => c.detail.gate === 'tests');
  expect(commands.map((c) => c.iteration)).toEqual([1, 2]);
  for (const c of commands) {
    expect(c.detail).toMatchObject({
      status: 'PASSED',
      exitCode: 0,
      testCounts: { passed: 2, failed: 0 },
      evidenceId: expect.any(String),
    });
    expect(c.detail.command.slice(0, 2)).toEqual(['node', '--test']);
    expect(c.title).toBe('tests: PASSED (exit 0) · 2 passed, 0 failed');
    expect(c.durationMs).toBeGreaterThanOrEqual(0);
  }

  // The reviewer's model calls with their tokens, and the triage call that checked the BLOCKER.
  const calls = ofKind(t.events, 'model_call');
  const reviews = calls.filter((c) => c.detail.role === 'reviewer' && c.detail.kind === 'MODEL_CALL');
  expect(reviews.map((c) => c.iteration)).toEqual([1, 2]);
  for (const c of reviews) {
    expect(c.detail).toMatchObject({
      provider: expect.any(String),
      model: 'scripted-reviewer',
      responseId: expect.stringMatching(/^chatcmpl-/),
      promptTokens: expect.any(Number),
      completionTokens: 20,
      outcome: 'VALID_LEDGER',
    });
    expect(c.durationMs).toBe(c.detail.latencyMs);
    expect(c.title).toMatch(/^reviewer model call: .+ scripted-reviewer → VALID_LEDGER · \d+ tokens$/);
  }
  expect(calls.filter((c) => c.detail.role === 'triage').map((c) => c.iteration)).toEqual([1]);

  // Both verdicts with the rule that fired; the maker's phase comes before its commands, the judge's before its verdict.
  const verdicts = ofKind(t.events, 'verdict');
  expect(verdicts.map((v) => [v.iteration, v.detail.verdict, v.detail.rule, v.detail.ruleRecorded])).toEqual([
    [1, 'ITERATE', 'BLOCKING_FINDINGS', true],
    [2, 'PASS', 'ALL_CLEAR', true],
  ]);
  expect(verdicts[0]!.title).toBe('Verdict ITERATE · rule BLOCKING_FINDINGS');
  expect(t.events.indexOf(maker1)).toBeLessThan(t.events.indexOf(commands[0]!));
  expect(t.events.indexOf(phases.find((p) => p.detail.phase === 'JUDGE' && p.iteration === 1)!)).toBeLessThan(
    t.events.indexOf(verdicts[0]!),
  );
  expect(ofKind(t.events, 'escalation')).toEqual([]);

  // Why iteration 1 iterated: the blocking finding, by name.
  const first = await h.request('GET', `/v1/loops/${loop.id}/iterations/1/explain`);
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({
    loopId: loop.id,
    iteration: 1,
    roundIteration: 1,
    maxIterations: 3,
    verdict: 'ITERATE',
    trigger: null,
    rule: 'BLOCKING_FINDINGS',
    ruleRecorded: true,
    reasons: ['1 valid blocking finding(s)'],
    directives: [`1. Resolve COR-001 (BLOCKER, src/sum.js:1-3): ${FINDING_TITLE}.`],
  });
  expect(first.body.explanation[0]).toBe(
    `ITERATE: 1 valid blocking finding(s) at iteration 1 of 3: COR-001 BLOCKER VALID “${FINDING_TITLE}”.`,
  );
  expect(first.body.inputs.findingTriage).toEqual([
    expect.objectContaining({
      findingId: 'COR-001',
      title: FINDING_TITLE,
      outcome: 'BLOCKING',
      source: 'REVIEWER',
      location: { file: 'src/sum.js', startLine: 1, endLine: 3 },
    }),
  ]);
  expect(first.body.inputs.gateAudit[0]).toMatchObject({
    gate: 'tests',
    status: 'PASSED',
    exitCode: 0,
    evidenceId: commands[0]!.detail.evidenceId,
  });
  expect(first.body.inputs.systemFindings).toEqual([]);

  // Why iteration 2 passed.
  const second = await h.request('GET', `/v1/loops/${loop.id}/iterations/2/explain`);
  expect(second.body).toMatchObject({
    verdict: 'PASS',
    rule: 'ALL_CLEAR',
    reasons: [expect.stringMatching(/^all configured gates passed/)],
    directives: [],
  });
  expect(second.body.explanation[0]).toBe(
    'PASS: all configured gates passed (tests), no valid blocking findings, every acceptance criterion proven (2 of 2).',
  );
  expect(second.body.explanation).toContain('Acceptance criteria: AC-1 PROVEN; AC-2 PROVEN.');
  expect(second.body.inputs.acCompliance.map((ac: any) => [ac.id, ac.status])).toEqual([
    ['AC-1', 'PROVEN'],
    ['AC-2', 'PROVEN'],
  ]);

  // Not found: no such iteration, or one not judged yet.
  const missing = await h.request('GET', `/v1/loops/${loop.id}/iterations/3/explain`);
  expect(missing).toMatchObject({
    status: 404,
    body: { statusCode: 404, error: 'Not Found', message: `iteration 3 of loop ${loop.id} was not found` },
  });
  await h.db.prisma.iteration.create({
    data: { loopId: loop.id, sequence: 9, roundIteration: 1, contractVersion: 1, startCommit: 'abc' },
  });
  const unjudged = await h.request('GET', `/v1/loops/${loop.id}/iterations/9/explain`);
  expect(unjudged.status).toBe(404);
  expect(unjudged.body.message).toMatch(/not judged yet/);
});

test('a loop that escalates: the wait for a human, a refused decision, the decision with its actor, and the explanation of the escalation', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: blockerLedger(FINDING_TITLE) });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
  const escalated = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(escalated.status).toBe('AWAITING_DECISION');

  // While it waits: the current phase and the open escalation have no duration yet. Any role may read.
  const waitingRes = await h.request('GET', `/v1/loops/${escalated.id}/timeline`, undefined, {
    authorization: `Bearer ${h.keys.submitter}`,
  });
  expect(waitingRes.status).toBe(200);
  const waiting = waitingRes.body as { events: TimelineEvent[] };
  expect(ofKind(waiting.events, 'phase').at(-1)).toMatchObject({
    detail: { phase: 'AWAITING_DECISION' },
    durationMs: null,
    iteration: 1,
  });
  expect(ofKind(waiting.events, 'escalation')).toEqual([
    expect.objectContaining({ iteration: 1, title: 'Escalation #1: MAX_ITERATIONS (OPEN)', durationMs: null }),
  ]);

  // A decision sent to Temporal directly by an actor nobody listed is refused, and shown.
  await h.temporal.workflow
    .getHandle(escalated.workflowId)
    .signal(decisionSignal, { kind: 'approve', actor: 'mallory' });
  let refused: TimelineEvent[] = [];
  for (let i = 0; i < 120 && refused.length === 0; i++) {
    refused = ofKind((await timeline(escalated.id)).events, 'refused_decision');
    if (refused.length === 0) await new Promise((r) => setTimeout(r, 250));
  }
  expect(refused).toEqual([
    expect.objectContaining({
      title: 'Decision refused (temporal-signal)',
      detail: { channel: 'temporal-signal', reason: expect.stringContaining('approve by "mallory" refused') },
    }),
  ]);

  const decided = await h.request(
    'POST',
    `/v1/loops/${escalated.id}/decisions`,
    { kind: 'reject', escalationId: escalated.escalations[0].id, comment: `not worth it; token ${TOKEN}` },
    { authorization: `Bearer ${h.keys.approver}` },
  );
  expect(decided.status).toBe(202);
  await h.waitForLoop(escalated.id, ['REJECTED']);

  const t = await timeline(escalated.id);
  expect(t).toMatchObject({ status: 'REJECTED', phase: 'DONE' });
  expectSortedByTime(t.events);
  expect(phasesOf(t.events).map((p) => [p.detail.phase, p.iteration])).toEqual([
    ['PREPARING', null],
    ['CONTRACT', null],
    ['MAKER', 1],
    ['VERIFY', 1],
    ['REVIEW', 1],
    ['JUDGE', 1],
    ['AWAITING_DECISION', 1],
    ['DONE', 1],
  ]);
  const awaiting = ofKind(t.events, 'phase').find((p) => p.detail.phase === 'AWAITING_DECISION')!;
  expect(awaiting.durationMs).toBeGreaterThan(0);
  expect(
    ofKind(t.events, 'verdict').map((v) => [v.iteration, v.detail.verdict, v.detail.trigger, v.detail.rule]),
  ).toEqual([[1, 'ESCALATE', 'MAX_ITERATIONS', 'MAX_ITERATIONS']]);
  const [escalation] = ofKind(t.events, 'escalation');
  expect(escalation).toMatchObject({
    iteration: 1,
    title: 'Escalation #1: MAX_ITERATIONS (DECIDED)',
    detail: { sequence: 1, trigger: 'MAX_ITERATIONS', status: 'DECIDED' },
  });
  expect(escalation!.durationMs).toBeGreaterThan(0);
  const [decision] = ofKind(t.events, 'decision');
  expect(decision).toMatchObject({
    iteration: 1,
    detail: { kind: 'reject', actor: expect.stringMatching(ANA), escalationSequence: 1 },
  });
  expect(decision!.title).toMatch(/^Decision: reject by ana \(key [0-9a-f-]{36}\)$/);
  // The comment is the approver's text, with the credential-shaped token redacted on the way out.
  expect(decision!.detail.comment).toMatch(/^not worth it; token /);
  expect(JSON.stringify(t)).not.toContain(TOKEN);
  expect(t.events.indexOf(escalation!)).toBeLessThan(t.events.indexOf(decision!));

  const explained = await h.request('GET', `/v1/loops/${escalated.id}/iterations/1/explain`);
  expect(explained.body).toMatchObject({
    verdict: 'ESCALATE',
    trigger: 'MAX_ITERATIONS',
    rule: 'MAX_ITERATIONS',
    reasons: ['1 valid blocking finding(s)', 'escalated: MAX_ITERATIONS'],
  });
  expect(explained.body.explanation[0]).toBe(
    `ESCALATE (MAX_ITERATIONS) at iteration 1 of 1: the work is not done and the iteration limit is reached. Still blocking: COR-001 BLOCKER VALID “${FINDING_TITLE}”.`,
  );
});

test('unknown loops are 404, malformed ids and iteration numbers 400, no key 401; both routes are in the OpenAPI document', async () => {
  const unknown = '00000000-0000-4000-8000-000000000000';
  expect(await h.request('GET', `/v1/loops/${unknown}/timeline`)).toMatchObject({
    status: 404,
    body: {
      statusCode: 404,
      error: 'Not Found',
      message: `loop ${unknown} was not found`,
      requestId: expect.any(String),
    },
  });
  expect((await h.request('GET', `/v1/loops/${unknown}/iterations/1/explain`)).status).toBe(404);
  const malformed = await h.request('GET', '/v1/loops/not-a-uuid/timeline');
  expect(malformed).toMatchObject({
    status: 400,
    body: { error: 'Bad Request', message: expect.stringContaining('params.id') },
  });
  for (const n of ['0', 'abc', '1.5', '-1']) {
    const bad = await h.request('GET', `/v1/loops/${unknown}/iterations/${n}/explain`);
    expect([n, bad.status, bad.body.message]).toEqual([n, 400, expect.stringContaining('params.n')]);
  }
  expect((await h.request('GET', `/v1/loops/${unknown}/timeline`, undefined, { authorization: '' })).status).toBe(401);

  const docs = (await (await fetch(`${h.baseUrl}/docs/json`)).json()) as { paths: Record<string, any> };
  expect(docs.paths['/v1/loops/{id}/timeline']?.get?.responses?.['200']).toBeDefined();
  expect(docs.paths['/v1/loops/{id}/iterations/{n}/explain']?.get?.responses?.['200']).toBeDefined();
});
