import { randomUUID } from 'node:crypto';
import { FEED_START, nextBatch, type FeedEvent } from '../../api/loop-event-feed';
import { timelineEvents } from '../../api/loop-timeline';
import { closeWithDecision, openEscalation } from '../../store/escalations';
import { clearWaiting, markWaiting } from '../../store/loop-waiting';
import { insertExecutionRecord } from '../../store/execution-records';
import { moveLoop } from '../../store/progress';
import { insertLoop, useTestDatabase } from '../support/database';

// What a loop's event stream sends next (api/loop-event-feed.ts) against real PostgreSQL transactions: a row
// is served only once every transaction that began before it has ended, so a reader that resumes after
// the last event it got misses nothing, however the writers' commits interleave.

const db = useTestDatabase();

const move = (loopId: string, phase: string, status = 'RUNNING') =>
  moveLoop(db.prisma, {
    loopId,
    status: status as 'RUNNING',
    phase: phase as 'MAKER',
    roundIteration: 1,
    lastVerdict: null,
    failureReason: null,
    key: randomUUID(),
    at: new Date().toISOString(),
    closesEscalations: false,
    ends: status !== 'RUNNING',
    run: null,
  });

const titles = (events: FeedEvent[]) => events.map((e) => `${e.event.kind} ${e.event.title}`);

/** Reads batches from `position` until `count` events came (other files' transactions may hold the horizon back a moment). */
async function collect(loopId: string, position: number, count: number) {
  const events: FeedEvent[] = [];
  const deadline = Date.now() + 30_000;
  for (;;) {
    const batch = await nextBatch(db.prisma, loopId, position);
    if (!batch) throw new Error(`loop ${loopId} is gone`);
    events.push(...batch.events);
    position = batch.position;
    if (events.length >= count || Date.now() > deadline) return { events, batch };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a row whose transaction began after a running one is held back until that one ends; then both come, in transaction order', async () => {
  const loopId = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'PREPARING' });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let written!: () => void;
  const slowWrote = new Promise<void>((resolve) => (written = resolve));
  // Begins first (its transaction id is the lower), commits last.
  const slow = db.prisma.$transaction(
    async (tx) => {
      await tx.loopEvent.create({
        data: { loopId, key: randomUUID(), status: 'RUNNING', phase: 'MAKER', roundIteration: 1 },
      });
      written();
      await held;
    },
    { timeout: 60_000 },
  );
  await slowWrote;
  await move(loopId, 'VERIFY');

  const during = (await nextBatch(db.prisma, loopId, FEED_START))!;
  // The later row is committed and visible, but a reader that took it now would skip the earlier one.
  expect(during).toMatchObject({ events: [], finished: false, loop: { status: 'RUNNING', phase: 'VERIFY' } });

  release();
  await slow;
  const { events } = await collect(loopId, during.position, 2);
  expect(titles(events)).toEqual(['phase MAKER', 'phase VERIFY']);
  expect(events[0]!.xid).toBeLessThan(events[1]!.xid);

  // Resuming after the first event's id gives the rest and nothing twice.
  expect(titles((await collect(loopId, events[0]!.xid, 1)).events)).toEqual(['phase VERIFY']);
  expect((await nextBatch(db.prisma, loopId, events[1]!.xid))?.events).toEqual([]);
  expect(await nextBatch(db.prisma, randomUUID(), FEED_START)).toBeNull();
});

test('a row written again (an escalation decided) comes again with its new content; the loop finishes once its end was served', async () => {
  const loopId = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'JUDGE' });
  const { escalationId } = await openEscalation(
    db.prisma,
    { loopId, sequence: 1, trigger: 'MAX_ITERATIONS' },
    { body: {}, markdown: '# escalated' },
  );
  await move(loopId, 'AWAITING_DECISION', 'AWAITING_DECISION');
  const opened = await collect(loopId, FEED_START, 2);
  expect(titles(opened.events)).toEqual(['escalation Escalation #1: MAX_ITERATIONS (OPEN)', 'phase AWAITING_DECISION']);

  await closeWithDecision(
    db.prisma,
    escalationId,
    { loopId, kind: 'reject', guidance: null, actor: 'ana', comment: null },
    new Date(),
  );
  await move(loopId, 'DONE', 'REJECTED');
  const decided = await collect(loopId, opened.batch.position, 3);
  // One transaction wrote the decision and the escalation: they come in time order.
  expect(titles(decided.events)).toEqual([
    'escalation Escalation #1: MAX_ITERATIONS (DECIDED)',
    'decision Decision: reject by ana',
    'phase DONE · REJECTED',
  ]);
  expect(decided.events[0]!.xid).toBe(decided.events[1]!.xid);
  expect(decided.batch).toMatchObject({ finished: true, loop: { status: 'REJECTED', phase: 'DONE' } });
});

test('what a loop waits for comes with each attempt that meets the outage, and leaves the timeline once the step got through', async () => {
  const loopId = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'REVIEW' });
  const attempt = (n: number) => `the model provider (runReview, attempt ${n}; retried until it answers): answered 503`;
  await markWaiting(db.prisma, loopId, attempt(1));
  const first = await collect(loopId, FEED_START, 1);
  expect(titles(first.events)).toEqual([`waiting Waiting for ${attempt(1)}`]);
  const since = first.events[0]!.event.at;
  expect(first.events[0]!.event).toMatchObject({ iteration: null, detail: { reason: attempt(1), since } });

  // The next attempt writes it again: sent again, since the outage's first attempt.
  await markWaiting(db.prisma, loopId, attempt(2));
  const second = await collect(loopId, first.batch.position, 1);
  expect(titles(second.events)).toEqual([`waiting Waiting for ${attempt(2)}`]);
  expect(second.events[0]!.event).toMatchObject({ at: since, detail: { reason: attempt(2), since } });

  await clearWaiting(db.prisma, loopId);
  expect((await timelineEvents(db.prisma, loopId)).map((e) => e.event.kind)).not.toContain('waiting');
  await move(loopId, 'JUDGE');
  expect(titles((await collect(loopId, second.batch.position, 1)).events)).toEqual(['phase JUDGE']);
});

test('a batch reads only the rows due, yet each event is what the whole timeline says of its row', async () => {
  const loopId = await insertLoop(db.prisma, { status: 'RUNNING', phase: 'PREPARING' });
  await move(loopId, 'MAKER');
  const record = (role: string) =>
    insertExecutionRecord(db.prisma, {
      loopId,
      role,
      kind: 'MODEL_CALL',
      provider: 'openai',
      outcome: 'VALID_LEDGER',
      latencyMs: 40,
      iterationSeq: 1,
    });
  await record('reviewer');
  const first = await collect(loopId, FEED_START, 2);
  expect(titles(first.events)).toEqual(['phase MAKER', 'model_call reviewer model call: openai → VALID_LEDGER']);

  // Each of these commits alone: a record, a gate's evidence, a phase (whose predecessor's duration it ends).
  await record('triage');
  await db.prisma.evidence.create({
    data: {
      loopId,
      gate: 'tests',
      gateOrder: 0,
      status: 'PASSED',
      source: 'RUNNER_JSON',
      command: ['npm', 'test'],
      executionId: randomUUID(),
      stdout: 'x'.repeat(10_000),
      stderr: '',
      assertionEvidence: [],
      exitCode: 0,
    },
  });
  await move(loopId, 'REVIEW');
  const next = await collect(loopId, first.batch.position, 3);
  const whole = new Map((await timelineEvents(db.prisma, loopId)).map((e) => [e.event.title, e.event]));
  expect(titles(next.events)).toEqual([
    'model_call triage model call: openai → VALID_LEDGER',
    'command tests: PASSED (exit 0)',
    'phase REVIEW',
  ]);
  for (const { event } of next.events) expect(event).toEqual(whole.get(event.title));
  // The earlier phase's row was not written again: it is not sent again, though its duration now has an end.
  expect(next.events.map((e) => e.event.title)).not.toContain('MAKER');
});
