import type { Prisma } from '../prisma/client';
import type { PrismaClient } from './db';

// Execution records: every agent process and model call, and every decision the workflow refused.

export async function insertExecutionRecord(
  db: PrismaClient,
  data: Prisma.ExecutionRecordUncheckedCreateInput,
): Promise<string> {
  const row = await db.executionRecord.create({ data, select: { id: true } });
  return row.id;
}

/** Settles the reviewer's records of an iteration still waiting for their ledger to be checked. */
export async function settlePendingLedger(
  db: PrismaClient,
  loopId: string,
  sequence: number,
  settled: { outcome: string; detail: string | null },
): Promise<void> {
  await db.executionRecord.updateMany({
    where: { loopId, iterationSeq: sequence, role: 'reviewer', outcome: 'PENDING_LEDGER' },
    data: settled,
  });
}

/** Stores a record under an id its writer chose; a retry that finds it there changes nothing. */
export async function insertRecordOnce(
  db: PrismaClient,
  data: Prisma.ExecutionRecordUncheckedCreateInput & { id: string },
): Promise<void> {
  await db.executionRecord.upsert({ where: { id: data.id }, create: data, update: {} });
}

/** What the records of these roles in one iteration spent. */
export function spendingOf(db: PrismaClient, loopId: string, sequence: number, roles: string[]) {
  return db.executionRecord.findMany({
    where: { loopId, iterationSeq: sequence, role: { in: roles } },
    select: { kind: true, promptTokens: true, completionTokens: true, costUsd: true, latencyMs: true },
  });
}

/** The iteration's latest reviewer record whose ledger was valid, or null. */
export function lastValidReview(db: PrismaClient, loopId: string, sequence: number) {
  return db.executionRecord.findFirst({
    where: { loopId, iterationSeq: sequence, role: 'reviewer', outcome: 'VALID_LEDGER' },
    orderBy: { createdAt: 'desc' },
  });
}

/** The maker's runs (agent processes, built-in sessions) and what the egress proxy refused them, oldest first. */
export function makerRunRecords(db: PrismaClient, loopId: string) {
  return db.executionRecord.findMany({
    where: { loopId, role: 'maker', kind: { in: ['AGENT_PROCESS', 'AGENT_SESSION', 'EGRESS'] } },
    orderBy: { createdAt: 'asc' },
    select: { iterationSeq: true, kind: true, provider: true, outcome: true, detail: true, latencyMs: true },
  });
}

/** How many maker runs an iteration has records of (one per attempt that ended, however it ended). */
export function countMakerRuns(db: PrismaClient, loopId: string, sequence: number) {
  return db.executionRecord.count({
    where: { loopId, iterationSeq: sequence, role: 'maker', kind: { in: ['AGENT_PROCESS', 'AGENT_SESSION'] } },
  });
}
