import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { recordProgress, type ProgressInput } from '../../activities/progress';
import { insertLoop, useTestDatabase } from '../support/database';

// recordProgress writes one phase event per workflow transition, in the same transaction as the loop's
// state; a retried attempt of the same move (same run id and move number, or without a number the same
// activity id) adds no second event.

const db = useTestDatabase();

const newLoop = () => insertLoop(db.prisma);

const progress = (loopId: string, extra: Partial<ProgressInput> = {}): ProgressInput => ({
  loopId,
  status: 'RUNNING',
  phase: 'MAKER',
  roundIteration: 1,
  lastVerdict: null,
  failureReason: null,
  move: 1,
  ...extra,
});

const attemptIn =
  (loopId: string, runId: string) =>
  (activityId: string, attemptNo: number, input: ProgressInput, isLocal = false) =>
    new MockActivityEnvironment({
      activityId,
      attempt: attemptNo,
      isLocal,
      workflowExecution: { workflowId: `loop-${loopId}`, runId },
    }).run((i: ProgressInput) => recordProgress(db.deps, i), input);

test('every attempt of a move records it once, under any activity id; a later move with the same fields is its own event', async () => {
  const loopId = await newLoop();
  const runId = randomUUID();
  const attempt = attemptIn(loopId, runId);

  await attempt('7', 1, progress(loopId, { move: 1 }));
  await attempt('7', 2, progress(loopId, { move: 1 }));
  // A local activity keeps its id across the retries its worker runs...
  await attempt('8', 1, progress(loopId, { phase: 'VERIFY', move: 2 }), true);
  await attempt('8', 2, progress(loopId, { phase: 'VERIFY', move: 2 }), true);
  // ...and is scheduled again under a new id after a backoff timer (its attempt number carries on).
  await attempt('9', 3, progress(loopId, { phase: 'VERIFY', move: 2 }), true);
  // The same transition again later (a loop sent back to the same phase) is another move, also when the
  // write that lands is a retry under a new id (its first attempts failed before writing).
  await attempt('11', 3, progress(loopId, { phase: 'VERIFY', move: 3 }), true);

  const events = await db.prisma.loopEvent.findMany({ where: { loopId }, orderBy: { createdAt: 'asc' } });
  expect(events.map((e) => [e.key, e.phase, e.status, e.roundIteration])).toEqual([
    [`${runId}:move-1`, 'MAKER', 'RUNNING', 1],
    [`${runId}:move-2`, 'VERIFY', 'RUNNING', 1],
    [`${runId}:move-3`, 'VERIFY', 'RUNNING', 1],
  ]);
  const loop = await db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } });
  expect([loop.status, loop.phase, loop.roundIteration]).toEqual(['RUNNING', 'VERIFY', 1]);
});

test('the same move in another run (after continue-as-new) is another event', async () => {
  const loopId = await newLoop();
  for (const runId of [randomUUID(), randomUUID()]) {
    await new MockActivityEnvironment({
      activityId: '1',
      workflowExecution: { workflowId: `loop-${loopId}`, runId },
    }).run((i: ProgressInput) => recordProgress(db.deps, i), progress(loopId));
  }
  expect(await db.prisma.loopEvent.count({ where: { loopId } })).toBe(2);
});

test('outside an activity each call is its own event unless the caller names the key; the loop update and the event commit together', async () => {
  const loopId = await newLoop();
  await recordProgress(db.deps, progress(loopId, { phase: 'PREPARING' }));
  await recordProgress(db.deps, progress(loopId, { phase: 'CONTRACT' }), 'fixed-key');
  await recordProgress(db.deps, progress(loopId, { phase: 'CONTRACT' }), 'fixed-key');
  const events = await db.prisma.loopEvent.findMany({ where: { loopId }, orderBy: { createdAt: 'asc' } });
  expect(events.map((e) => e.phase)).toEqual(['PREPARING', 'CONTRACT']);
  expect(events[0]!.key).toMatch(/^adhoc:/);

  // A loop that does not exist: the update fails, and no event is left without its loop state.
  const missing = randomUUID();
  await expect(recordProgress(db.deps, progress(missing), 'orphan')).rejects.toThrow();
  expect(await db.prisma.loopEvent.count({ where: { key: 'orphan' } })).toBe(0);

  // A terminal status closes open escalations and records the end with its reason.
  await db.prisma.escalation.create({
    data: { loopId, sequence: 1, trigger: 'MAX_ITERATIONS', reportId: 'r', status: 'OPEN' },
  });
  await recordProgress(
    db.deps,
    progress(loopId, { status: 'FAILED', phase: 'DONE', failureReason: 'runMaker: boom' }),
    'end',
  );
  const ended = await db.prisma.loop.findUniqueOrThrow({
    where: { id: loopId },
    include: { escalations: true, events: { where: { key: 'end' } } },
  });
  expect(ended).toMatchObject({
    status: 'FAILED',
    failureReason: 'runMaker: boom',
    escalations: [{ status: 'FAILED' }],
    events: [{ phase: 'DONE', failureReason: 'runMaker: boom' }],
  });
  expect(ended.finishedAt).toBeInstanceOf(Date);
});

test('the move is stamped with the time of the call, in the columns Prisma reads back; a move without a reason keeps the last one', async () => {
  const loopId = await newLoop();
  const before = Date.now();
  await recordProgress(db.deps, progress(loopId, { phase: 'VERIFY', failureReason: 'gate timed out' }), 'stamped');
  const after = Date.now();
  await recordProgress(db.deps, progress(loopId, { phase: 'REVIEW' }), 'no-reason');

  const loop = await db.prisma.loop.findUniqueOrThrow({
    where: { id: loopId },
    include: { events: { orderBy: { createdAt: 'asc' } } },
  });
  const stamped = loop.events.find((e) => e.key === 'stamped')!;
  expect(stamped.createdAt.getTime()).toBeGreaterThanOrEqual(before);
  expect(stamped.createdAt.getTime()).toBeLessThanOrEqual(after);
  expect(loop.updatedAt.getTime()).toBeGreaterThanOrEqual(stamped.createdAt.getTime());
  expect(loop).toMatchObject({
    status: 'RUNNING',
    phase: 'REVIEW',
    roundIteration: 1,
    lastVerdict: null,
    failureReason: 'gate timed out',
    finishedAt: null,
  });
  expect(loop.events.map((e) => [e.key, e.phase, e.failureReason])).toEqual([
    ['stamped', 'VERIFY', 'gate timed out'],
    ['no-reason', 'REVIEW', null],
  ]);
});

// The read model only moves forward (store/progress.ts): a cancelled loop once showed RUNNING/PREPARING
// for ever, because its phase's entry, written by an activity the cancel had overtaken, landed after the
// end record. Each write below is an attempt as the worker runs it, in the order of that race.

test('the cancel race: the end is recorded, then the late entry into PREPARING — the loop stays CANCELLED and its timeline ends with DONE', async () => {
  const runId = randomUUID();
  const loopId = await insertLoop(db.prisma, { currentRunId: runId });
  const attempt = attemptIn(loopId, runId);

  // The workflow numbered the entry into PREPARING 1 and, cancelled, the end 2: the end lands first.
  await attempt(
    '2',
    1,
    progress(loopId, { status: 'CANCELLED', phase: 'DONE', failureReason: 'cancelled', move: 2 }),
    true,
  );
  await attempt('1', 1, progress(loopId, { status: 'RUNNING', phase: 'PREPARING', roundIteration: 0, move: 1 }));

  const loop = await db.prisma.loop.findUniqueOrThrow({
    where: { id: loopId },
    include: { events: { orderBy: { createdAt: 'asc' } } },
  });
  expect(loop).toMatchObject({ status: 'CANCELLED', phase: 'DONE', failureReason: 'cancelled', move: 2 });
  expect(loop.finishedAt).toBeInstanceOf(Date);
  // The late write records no event: the timeline shows no stale move after DONE.
  expect(loop.events.map((e) => [e.key, e.status, e.phase])).toEqual([[`${runId}:move-2`, 'CANCELLED', 'DONE']]);
});

test('an ended loop is not moved again, even by a later move of its own run', async () => {
  const runId = randomUUID();
  const loopId = await insertLoop(db.prisma, { currentRunId: runId });
  const attempt = attemptIn(loopId, runId);
  await attempt(
    '1',
    1,
    progress(loopId, { status: 'FAILED', phase: 'DONE', failureReason: 'runMaker: boom', move: 4 }),
    true,
  );
  await attempt('2', 1, progress(loopId, { status: 'RUNNING', phase: 'VERIFY', move: 5 }));
  // Outside a workflow (no run, no move number) the end holds too.
  await recordProgress(db.deps, progress(loopId, { status: 'RUNNING', phase: 'MAKER' }));

  const loop = await db.prisma.loop.findUniqueOrThrow({ where: { id: loopId }, include: { events: true } });
  expect(loop).toMatchObject({ status: 'FAILED', phase: 'DONE', failureReason: 'runMaker: boom', move: 4 });
  expect(loop.events.map((e) => e.phase)).toEqual(['DONE']);
});

test('a running loop never goes back to an earlier move of its run; a run that is not its own moves nothing; the run it continued into counts afresh', async () => {
  const first = randomUUID();
  const loopId = await insertLoop(db.prisma, { currentRunId: first });
  const inFirst = attemptIn(loopId, first);
  await inFirst('1', 1, progress(loopId, { phase: 'VERIFY', move: 3 }));
  // A write of move 2 (the maker's entry) that was held up lands after move 3.
  await inFirst('2', 1, progress(loopId, { phase: 'MAKER', move: 2 }));
  expect(await db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } })).toMatchObject({ phase: 'VERIFY', move: 3 });

  // The loop continued as new: its next run claimed it (activities/run-binding.ts) and counts from 1.
  const second = randomUUID();
  await db.prisma.loop.update({ where: { id: loopId }, data: { currentRunId: second } });
  const inSecond = attemptIn(loopId, second);
  await inSecond('1', 1, progress(loopId, { phase: 'MAKER', roundIteration: 1, move: 1 }));
  // A late write of the first run, with a higher number than the second's, moves nothing.
  await inFirst('3', 1, progress(loopId, { phase: 'REVIEW', move: 4 }));
  await inSecond('2', 1, progress(loopId, { phase: 'VERIFY', roundIteration: 1, move: 2 }));

  const loop = await db.prisma.loop.findUniqueOrThrow({
    where: { id: loopId },
    include: { events: { orderBy: { createdAt: 'asc' } } },
  });
  expect(loop).toMatchObject({ phase: 'VERIFY', moveRunId: second, move: 2 });
  expect(loop.events.map((e) => e.key)).toEqual([`${first}:move-3`, `${second}:move-1`, `${second}:move-2`]);
});
