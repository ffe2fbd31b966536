import type { ConnectWait, Prisma, PrismaClient } from '../prisma/client';

// The database as the rest of the service sees it: the client built in service/ and passed down, and
// writes handed back unsent so one batch transaction can carry writes of several store files.

export type { ConnectWait, PrismaClient };

/** A write not sent yet: Prisma sends it when it is awaited or run in `inTransaction`. */
export type PendingWrite = Prisma.PrismaPromise<unknown>;

/** Runs `writes` in one transaction, in order: a retry finds all of them or none. */
export function inTransaction(db: PrismaClient, writes: PendingWrite[]): Promise<unknown[]> {
  return db.$transaction(writes);
}

/** The cheapest round trip: whether the database answers. */
export function ping(db: PrismaClient): Promise<unknown> {
  return db.$queryRaw`SELECT 1`;
}
