import { DEFAULT_API_POLICY } from '../../api/deps';
import { NOT_AWAITING_DECISION, decideUpdate, decisionSignal } from '../../workflows/messages';
import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, SUM_TESTS, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { recordHistory } from '../support/histories';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// Decisions cannot be self-granted: not by waiting out a deadline, not from a stale page, not by the key
// that submitted the loop, and not by sending the update or signal to Temporal directly.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({
    policy: {
      ...DEFAULT_API_POLICY,
      decisions: {
        allowDeadlineApprove: true,
        separationOfDuties: true,
        signalActors: [],
        majorImpactNeedsApproval: false,
      },
    },
    workerEnv: { DECISION_SIGNAL_ACTORS: 'ops@cli' },
  });
});
afterAll(async () => {
  await h?.close();
});

const asApprover = () => ({ authorization: `Bearer ${h.keys.approver}` });

/** Polls the loop until `done` holds. */
async function until(id: string, done: (loop: any) => boolean): Promise<any> {
  const deadline = Date.now() + 180_000;
  let loop: any;
  while (Date.now() < deadline) {
    loop = (await h.request('GET', `/v1/loops/${id}`)).body;
    if (done(loop)) return loop;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `loop ${id} never got there; last state: ${JSON.stringify(loop)}\nworker output:\n${h.worker.output()}`,
  );
}

test('a deadline that approves by default rejects an escalation carrying system BLOCKER findings', async () => {
  const repo = createFixtureRepo();
  const skipped = SUM_TESTS.replace("test('sum handles negatives'", "test.skip('sum handles negatives'");
  const maker = scriptedMaker({
    steps: { '1': { write: { 'src/sum.js': CORRECT_SUM, 'test/sum.test.js': skipped } } },
  });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, {
      maxIterations: 1,
      escalation: { decisionDeadlineSeconds: 1, defaultDecision: 'approve' },
    }),
  );
  expect(submitted.status).toBe(201);
  const loop = await h.waitForLoop(submitted.body.id, ['REJECTED', 'APPROVED', 'PASSED', 'FAILED']);
  // The skip also shows in the frozen run: with the base test file, one more test ran.
  expect(loop.iterations[0].findings).toEqual([
    expect.objectContaining({ source: 'SYSTEM', rule: 'SKIP_OR_ONLY_ADDED', severity: 'BLOCKER' }),
    expect.objectContaining({
      source: 'SYSTEM',
      rule: 'FEWER_TESTS_RUN',
      severity: 'BLOCKER',
      location: expect.objectContaining({ file: 'test/sum.test.js' }),
    }),
  ]);
  expect(loop.status).toBe('REJECTED');
  expect(loop.escalations[0].decision).toMatchObject({
    kind: 'reject',
    actor: 'system:decision-deadline',
    comment:
      'no decision within 1 s; the default approve does not apply to 2 system BLOCKER finding(s) (tampering or out-of-scope changes)',
  });
  recordHistory(loop.workflowId, 'deadline-spares-system-blockers');
});

test('a decision must name the open escalation, come from another key than the submitter, and carry an API ticket or a listed actor', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: {
      '1': { write: { 'src/sum.js': CORRECT_SUM } },
      '2': { write: { 'src/sum.js': `// retried\n${CORRECT_SUM}` } },
    },
  });
  h.llm.enqueue({ content: blockerLedger() }, { content: blockerLedger() });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
  const first = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(first.status).toBe('AWAITING_DECISION');
  const id = first.id;
  const firstEscalation = first.escalations[0].id;
  const handle = h.temporal.workflow.getHandle(first.workflowId);

  // Separation of duties: the admin key submitted this loop, so it may not decide it.
  const own = await h.request('POST', `/v1/loops/${id}/decisions`, { kind: 'approve', escalationId: firstEscalation });
  expect(own).toMatchObject({
    status: 403,
    body: {
      message: `separation of duties: API key "test-admin" submitted loop ${id}, so another approver must decide it`,
    },
  });

  // Whoever reaches Temporal can send the update with any actor; without a ticket it is refused and recorded.
  await handle.executeUpdate(decideUpdate, { args: [{ kind: 'approve', actor: 'mallory' }] });
  const refused = await until(id, (loop) => loop.refusedDecisions.length > 0);
  expect(refused.refusedDecisions).toEqual([
    {
      channel: 'temporal-update',
      reason:
        'escalation #1: approve by "mallory" refused: no API ticket, and the actor is not in DECISION_SIGNAL_ACTORS',
      createdAt: expect.any(String),
    },
  ]);
  expect(refused).toMatchObject({ status: 'AWAITING_DECISION', escalations: [{ status: 'OPEN', decision: null }] });

  // A signal cannot answer its sender, so one the loop cannot take is recorded where the sender can see it.
  await handle.signal(decisionSignal, { kind: 'maybe', actor: 'ops@cli' } as never);
  await handle.signal(decisionSignal, { kind: 'approve', actor: 'ops@cli', escalationSequence: 7 });
  const ignored = await until(id, (loop) => loop.refusedDecisions.length === 3);
  expect(ignored.refusedDecisions.slice(1).map((r: any) => [r.channel, r.reason])).toEqual([
    ['temporal-signal', expect.stringMatching(/^decision signal \(kind "maybe", actor "ops@cli"\) refused: kind: /)],
    [
      'temporal-signal',
      `decision signal (kind "approve", actor "ops@cli") refused: loop ${id} is not awaiting a decision on escalation #7 (escalation #1 is open)`,
    ],
  ]);
  expect(ignored).toMatchObject({ status: 'AWAITING_DECISION', escalations: [{ status: 'OPEN', decision: null }] });
  const firstRunId = (await handle.describe()).runId;

  // An approver decides (the loop is still waiting after the refusal); a second escalation opens.
  const retry = { kind: 'retry', guidance: 'Keep it exact.', escalationId: firstEscalation };
  expect((await h.request('POST', `/v1/loops/${id}/decisions`, retry, asApprover())).status).toBe(202);
  const second = await until(id, (loop) => loop.status === 'AWAITING_DECISION' && loop.escalations.length === 2);
  expect(second.escalations[0].decision).toMatchObject({ kind: 'retry', actor: expect.stringMatching(/^ana \(key /) });
  const tickets = await h.db.prisma.decisionTicket.findMany({ where: { loopId: id } });
  expect(tickets).toEqual([
    expect.objectContaining({
      escalationSequence: 1,
      kind: 'retry',
      usedAt: expect.any(Date),
      tokenHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    }),
  ]);

  // A stale page still naming the first escalation gets 409, from the API and from the workflow alike.
  const stale = await h.request(
    'POST',
    `/v1/loops/${id}/decisions`,
    { kind: 'approve', escalationId: firstEscalation },
    asApprover(),
  );
  expect(stale).toMatchObject({
    status: 409,
    body: { message: `loop ${id}: escalation #1 was already decided and is not the open one` },
  });
  const staleUpdate = handle.executeUpdate(decideUpdate, {
    args: [{ kind: 'approve', actor: 'ops@cli', escalationSequence: 1 }],
  });
  await expect(staleUpdate).rejects.toMatchObject({
    cause: {
      type: NOT_AWAITING_DECISION,
      message: `loop ${id} is not awaiting a decision on escalation #1 (escalation #2 is open)`,
    },
  });

  // The signal path (Temporal CLI/UI) is honoured for an actor the operator listed.
  await handle.signal(decisionSignal, { kind: 'reject', actor: 'ops@cli', comment: 'from the Temporal CLI' });
  const done = await h.waitForLoop(id, ['REJECTED', 'APPROVED', 'PASSED']);
  expect(done.status).toBe('REJECTED');
  expect(done.escalations[1].decision).toMatchObject({
    kind: 'reject',
    actor: 'ops@cli',
    comment: 'from the Temporal CLI',
  });
  recordHistory(done.workflowId, 'refused-forged-update-then-signal');
  recordHistory(done.workflowId, 'refused-invalid-signals-then-retry', firstRunId);
});
