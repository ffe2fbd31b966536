import type { Prisma } from '../prisma/client';
import type { PendingWrite, PrismaClient } from './db';

// The finding ledger's rows: the reviewer's findings and the ones the system raises itself.

export type FindingRow = Prisma.FindingCreateManyInput;

/** Writes findings, skipping any the iteration has already (a retry); sent with the caller's transaction. */
export function insertFindings(db: PrismaClient, rows: FindingRow[]): PendingWrite {
  return db.finding.createMany({ data: rows, skipDuplicates: true });
}

/** An iteration's system findings whose ids start with `prefix`, by id. */
export function systemFindings(db: PrismaClient, iterationId: string, prefix: string) {
  return db.finding.findMany({
    where: { iterationId, source: 'SYSTEM', findingId: { startsWith: prefix } },
    orderBy: { findingId: 'asc' },
    select: { findingId: true, rule: true, title: true, topic: true, severity: true, location: true, signature: true },
  });
}

/** An iteration's valid BLOCKER and HIGH findings, by id. */
export function blockingFindings(db: PrismaClient, iterationId: string) {
  return db.finding.findMany({
    where: { iterationId, validity: 'VALID', severity: { in: ['BLOCKER', 'HIGH'] } },
    orderBy: { findingId: 'asc' },
  });
}

/** What the maker is told of the valid BLOCKER and HIGH findings iteration `sequence` left open. */
export function blockingFindingsForMaker(db: PrismaClient, loopId: string, sequence: number) {
  return db.finding.findMany({
    where: { loopId, iteration: { sequence }, validity: 'VALID', severity: { in: ['BLOCKER', 'HIGH'] } },
    orderBy: { findingId: 'asc' },
    select: {
      findingId: true,
      severity: true,
      title: true,
      location: true,
      evidence: true,
      concreteAlternativeDiff: true,
    },
  });
}
