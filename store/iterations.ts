import type { PendingWrite, PrismaClient } from './db';
import { diffUpsert, storedDiff } from './iteration-diffs';

// The Iteration row: one maker run and the checks of its checkpoint, each marked done once stored.

const at = (loopId: string, sequence: number) => ({ loopId_sequence: { loopId, sequence } });

export function iterationAt(db: PrismaClient, loopId: string, sequence: number) {
  return db.iteration.findUniqueOrThrow({ where: at(loopId, sequence) });
}

/** The iteration, or null before its maker first started. */
export function findIteration(db: PrismaClient, loopId: string, sequence: number) {
  return db.iteration.findUnique({ where: at(loopId, sequence) });
}

/** The iteration with what the verification summary quotes of its evidence (not the gates' whole output). */
export function iterationWithGateResults(db: PrismaClient, loopId: string, sequence: number) {
  return db.iteration.findUniqueOrThrow({
    where: at(loopId, sequence),
    include: {
      evidence: {
        orderBy: { gateOrder: 'asc' },
        select: { gate: true, status: true, exitCode: true, testCounts: true },
      },
    },
  });
}

export function iterationWithVerdict(db: PrismaClient, loopId: string, sequence: number) {
  return db.iteration.findUniqueOrThrow({ where: at(loopId, sequence), include: { verdict: true } });
}

export function createIteration(
  db: PrismaClient,
  row: {
    loopId: string;
    sequence: number;
    roundIteration: number;
    contractVersion: number;
    startCommit: string;
    makerAttempts: number;
  },
): Promise<{ id: string }> {
  return db.iteration.create({ data: row, select: { id: true } });
}

/**
 * The loop's change replayed onto a moved base as an iteration with no maker, and that base made the loop's
 * (what its change is measured against from now on): one transaction, so a retry sees both or neither.
 */
export async function recordReplayedIteration(
  db: PrismaClient,
  row: {
    loopId: string;
    sequence: number;
    roundIteration: number;
    contractVersion: number;
    /** The moved base. */
    startCommit: string;
    checkpointCommit: string;
    diffHash: string;
    changedFiles: string[];
    replayedFromBase: string;
    replayedFromCheckpoint: string;
  },
  /** The replayed change from the moved base. */
  diff: string,
): Promise<void> {
  await db.$transaction([
    db.iteration.create({
      data: {
        ...row,
        noChange: false,
        makerAttempts: 0,
        makerFinishedAt: new Date(),
        diff: { create: storedDiff(diff) },
      },
      select: { id: true },
    }),
    db.loop.update({ where: { id: row.loopId }, data: { baseCommit: row.startCommit }, select: { id: true } }),
  ]);
}

export async function countMakerAttempt(db: PrismaClient, id: string): Promise<void> {
  await db.iteration.update({ where: { id }, data: { makerAttempts: { increment: 1 } }, select: { id: true } });
}

/** Which process runs the maker, so a later attempt can stop one a dead worker left running. */
export function recordMakerProcess(
  db: PrismaClient,
  loopId: string,
  sequence: number,
  process: { makerPid: number; makerHost: string },
) {
  return db.iteration.update({
    where: at(loopId, sequence),
    data: { ...process, makerStartedAt: new Date() },
    select: { id: true },
  });
}

/** Stores the maker's result with the change from the base (`diff`); the updated row is the result. */
export function recordMakerResult(
  db: PrismaClient,
  loopId: string,
  sequence: number,
  result: {
    checkpointCommit: string;
    diffHash: string;
    changedFiles: string[];
    noChange: boolean;
    makerExitCode: number | null;
    makerTimeoutStatus: string;
    makerFinishedAt: Date;
  },
  diff: string,
) {
  return db.iteration.update({ where: at(loopId, sequence), data: { ...result, diff: diffUpsert(diff) } });
}

export async function recordBacktrack(
  db: PrismaClient,
  loopId: string,
  sequence: number,
  toCommit: string,
): Promise<void> {
  await db.iteration.update({ where: at(loopId, sequence), data: { backtrackedTo: toCommit }, select: { id: true } });
}

// The marks below are sent with the caller's transaction, or awaited alone.

export function markInspected(db: PrismaClient, id: string): PendingWrite {
  return db.iteration.update({ where: { id }, data: { inspectedAt: new Date() }, select: { id: true } });
}

export function markVerified(db: PrismaClient, id: string): PendingWrite {
  return db.iteration.update({ where: { id }, data: { verifiedAt: new Date() }, select: { id: true } });
}

export function markReviewed(db: PrismaClient, id: string, outcome: object): PendingWrite {
  return db.iteration.update({
    where: { id },
    data: { reviewedAt: new Date(), reviewOutcome: outcome },
    select: { id: true },
  });
}
