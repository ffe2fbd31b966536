import { TERMINAL_STATUSES } from '../domain/loop-state';
import { Prisma } from '../prisma/client';
import type { PrismaClient } from './db';

// The Loop row: what the activities read of their loop and write back to it.

export type LoopRow = Awaited<ReturnType<PrismaClient['loop']['findUniqueOrThrow']>>;

export function loopById(db: PrismaClient, id: string) {
  return db.loop.findUniqueOrThrow({ where: { id } });
}

/** The loop, or null. */
export function findLoop(db: PrismaClient, id: string) {
  return db.loop.findUnique({ where: { id } });
}

/** The loop with every iteration (in order) and its verdict: what an escalation report tells. */
export function loopWithAttempts(db: PrismaClient, id: string) {
  return db.loop.findUniqueOrThrow({
    where: { id },
    include: { iterations: { orderBy: { sequence: 'asc' }, include: { verdict: true } } },
  });
}

/** The columns prepareWorkspace sets once. */
export function preparedLoopColumns(db: PrismaClient, id: string) {
  return db.loop.findUniqueOrThrow({
    where: { id },
    select: { workspacePath: true, baseCommit: true, repoUrl: true, gatePlan: true },
  });
}

/** The commit the loop's change is measured against (moved when delivery replays the change onto a moved base). */
export function loopBaseCommit(db: PrismaClient, id: string) {
  return db.loop.findUniqueOrThrow({ where: { id }, select: { baseCommit: true } });
}

export function loopGatePlan(db: PrismaClient, id: string) {
  return db.loop.findUniqueOrThrow({ where: { id }, select: { gatePlan: true } });
}

export async function recordPreparedWorkspace(
  db: PrismaClient,
  id: string,
  prepared: { workspacePath: string; baseCommit: string; branch: string; gatePlan: object; sandbox: string },
): Promise<void> {
  await db.loop.update({ where: { id }, data: prepared, select: { id: true } });
}

export async function recordDelivery(
  db: PrismaClient,
  id: string,
  delivery: { pushedBranch: string | null; pullRequestUrl: string | null; deliveryError: string | null },
): Promise<void> {
  await db.loop.update({ where: { id }, data: delivery, select: { id: true } });
}

/** NONE, TARGETED or MAJOR, read before delivery (domain/context-impact.ts). */
export async function recordContextImpact(db: PrismaClient, id: string, level: string): Promise<void> {
  await db.loop.update({ where: { id }, data: { contextImpact: level }, select: { id: true } });
}

/** Which of `ids` ended (a terminal status) before `cutoff`. */
export function loopsEndedBefore(db: PrismaClient, ids: string[], cutoff: Date) {
  return db.loop.findMany({
    where: { id: { in: ids }, status: { in: [...TERMINAL_STATUSES] }, finishedAt: { lt: cutoff } },
    select: { id: true },
  });
}

// A submission's rows, written by the API.

/** The loop submitted with this Idempotency-Key, or null. */
export function loopByIdempotencyKey(db: PrismaClient, idempotencyKey: string) {
  return db.loop.findUnique({ where: { idempotencyKey } });
}

/**
 * Records a submitted loop. When another request with the same Idempotency-Key stored its loop first
 * (two concurrent requests with one key), returns that one instead, not created.
 */
export async function insertLoop(
  db: PrismaClient,
  data: Prisma.LoopUncheckedCreateInput,
): Promise<{ loop: LoopRow; created: boolean }> {
  try {
    return { loop: await db.loop.create({ data }), created: true };
  } catch (err) {
    if (data.idempotencyKey && err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      return {
        loop: await db.loop.findUniqueOrThrow({ where: { idempotencyKey: data.idempotencyKey } }),
        created: false,
      };
    }
    throw err;
  }
}

/** Removes a loop whose workflow did not start, unless the workflow has moved it on from QUEUED. */
export async function withdrawQueuedLoop(db: PrismaClient, id: string): Promise<void> {
  await db.loop.deleteMany({ where: { id, status: 'QUEUED' } });
}
