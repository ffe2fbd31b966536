import type { PrismaClient } from './db';

// Reports: the final report, escalation reports (store/escalations.ts writes those) and the patch.

const keyed = (loopId: string, key: string) => ({ loopId_key: { loopId, key } });

export function finalReport(db: PrismaClient, loopId: string) {
  return db.report.findUnique({ where: keyed(loopId, 'final') });
}

/** Stores the final report unless the loop has one; returns the stored one's id. */
export async function storeFinalReport(
  db: PrismaClient,
  loopId: string,
  report: { body: object; markdown: string },
): Promise<string> {
  const stored = await db.report.upsert({
    where: keyed(loopId, 'final'),
    create: { loopId, kind: 'FINAL', key: 'final', ...report },
    update: {},
    select: { id: true },
  });
  return stored.id;
}

/** Stores the loop's patch, replacing an earlier attempt's. */
export async function storePatchReport(
  db: PrismaClient,
  loopId: string,
  patch: { body: object; markdown: string },
): Promise<void> {
  await db.report.upsert({
    where: keyed(loopId, 'patch'),
    create: { loopId, kind: 'PATCH', key: 'patch', ...patch },
    update: patch,
    select: { id: true },
  });
}

export function patchOf(db: PrismaClient, loopId: string) {
  return db.report.findUnique({ where: keyed(loopId, 'patch') });
}

/** The final report, or else the latest escalation report; null before either. */
export async function latestReport(db: PrismaClient, loopId: string) {
  return (
    (await db.report.findFirst({ where: { loopId, kind: 'FINAL' } })) ??
    (await db.report.findFirst({ where: { loopId, kind: 'ESCALATION' }, orderBy: { createdAt: 'desc' } }))
  );
}

export function reportsById(db: PrismaClient, ids: string[]) {
  return db.report.findMany({ where: { id: { in: ids } } });
}
