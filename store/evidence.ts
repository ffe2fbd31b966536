import type { Prisma } from '../prisma/client';
import type { PrismaClient } from './db';

// Evidence: one row per command run by a gate, an acceptance check or a set-up step.

export type EvidenceData = Prisma.EvidenceUncheckedCreateInput;

/** What a gate's summary reads of its evidence row: not the stored output, up to a megabyte a stream. */
const SUMMARY_FIELDS = {
  id: true,
  gate: true,
  status: true,
  command: true,
  exitCode: true,
  stderr: true,
  timeoutStatus: true,
  testCounts: true,
  failureReason: true,
  failureSignature: true,
  assertionEvidence: true,
} as const satisfies Prisma.EvidenceSelect;

/** Stores a gate's run; returns what its summary reads. */
export function insertGateEvidence(db: PrismaClient, data: EvidenceData) {
  return db.evidence.create({ data, select: SUMMARY_FIELDS });
}

export type GateEvidence = Awaited<ReturnType<typeof insertGateEvidence>>;

/** An iteration's gate runs, in gate order, as their summaries read them. */
export function gateEvidenceOf(db: PrismaClient, iterationId: string): Promise<GateEvidence[]> {
  return db.evidence.findMany({ where: { iterationId }, orderBy: { gateOrder: 'asc' }, select: SUMMARY_FIELDS });
}

/** The loop's run of a gate beside the iteration's (the base run): the earliest, as its names and counts were stored. */
export function loopTestsEvidence(db: PrismaClient, loopId: string, gate: string) {
  return db.evidence.findFirst({
    where: { loopId, gate },
    orderBy: { createdAt: 'asc' },
    select: { testCounts: true, passedTests: true, failedTests: true },
  });
}

/** The loop's own run of `gate` (made before any iteration) becomes the iteration's evidence. */
export async function adoptLoopEvidence(
  db: PrismaClient,
  loopId: string,
  gate: string,
  iterationId: string,
): Promise<void> {
  await db.evidence.updateMany({ where: { loopId, gate, iterationId: null }, data: { iterationId } });
}

export async function insertSetupEvidence(db: PrismaClient, data: EvidenceData): Promise<string> {
  const row = await db.evidence.create({ data, select: { id: true } });
  return row.id;
}

/** Rewrites the source detail of rows already written (a set-up's, once it is known whether its result was kept). */
export async function setEvidenceDetails(
  db: PrismaClient,
  rows: { id: string; sourceDetail: string }[],
): Promise<void> {
  await db.$transaction(
    rows.map((row) => db.evidence.update({ where: { id: row.id }, data: { sourceDetail: row.sourceDetail } })),
  );
}

/**
 * Discards an interrupted verification's evidence and its own findings (ids starting with `findingPrefix`),
 * in one transaction.
 */
export async function discardVerificationAttempt(
  db: PrismaClient,
  iterationId: string,
  findingPrefix: string,
): Promise<void> {
  await db.$transaction([
    db.evidence.deleteMany({ where: { iterationId } }),
    db.finding.deleteMany({ where: { iterationId, findingId: { startsWith: findingPrefix } } }),
  ]);
}

/** Discards the loop's workspace set-up evidence whose gate starts with `gatePrefix`. */
export async function discardSetupEvidence(db: PrismaClient, loopId: string, gatePrefix: string): Promise<void> {
  await db.evidence.deleteMany({ where: { loopId, iterationId: null, gate: { startsWith: gatePrefix } } });
}

/** One evidence record of the loop, or null. */
export function evidenceOfLoop(db: PrismaClient, loopId: string, evidenceId: string) {
  return db.evidence.findFirst({ where: { id: evidenceId, loopId } });
}

/** One stored stream of an evidence record of the loop; null for no such record. */
export async function evidenceOutput(
  db: PrismaClient,
  loopId: string,
  evidenceId: string,
  stream: 'stdout' | 'stderr',
): Promise<string | null> {
  const evidence = await db.evidence.findFirst({
    where: { id: evidenceId, loopId },
    select: { stdout: stream === 'stdout', stderr: stream === 'stderr' },
  });
  return evidence && (evidence[stream] ?? '');
}
