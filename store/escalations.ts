import type { PrismaClient } from './db';

// Escalations and the decisions that close them; the inbox's reads.

/** Stores an escalation's report and opens the escalation; both keep their first write. */
export async function openEscalation(
  db: PrismaClient,
  at: { loopId: string; sequence: number; trigger: string },
  report: { body: object; markdown: string },
): Promise<{ escalationId: string; reportId: string }> {
  const { loopId, sequence } = at;
  const key = `escalation-${sequence}`;
  const stored = await db.report.upsert({
    where: { loopId_key: { loopId, key } },
    create: { loopId, kind: 'ESCALATION', key, body: report.body, markdown: report.markdown },
    update: {},
  });
  const escalation = await db.escalation.upsert({
    where: { loopId_sequence: { loopId, sequence } },
    create: { loopId, sequence, trigger: at.trigger, reportId: stored.id, status: 'OPEN' },
    update: {},
  });
  return { escalationId: escalation.id, reportId: stored.id };
}

export function escalationAt(db: PrismaClient, loopId: string, sequence: number) {
  return db.escalation.findUniqueOrThrow({ where: { loopId_sequence: { loopId, sequence } } });
}

/** Records the decision (its first write is kept) and marks the escalation decided, in one transaction. */
export function closeWithDecision(
  db: PrismaClient,
  escalationId: string,
  decision: { loopId: string; kind: string; guidance: string | null; actor: string; comment: string | null },
  decidedAt: Date,
): Promise<unknown> {
  return db.$transaction([
    db.decision.upsert({ where: { escalationId }, create: { ...decision, escalationId }, update: {} }),
    db.escalation.update({ where: { id: escalationId }, data: { status: 'DECIDED', decidedAt } }),
  ]);
}

/** The loop's escalation with this id, or null. */
export function escalationOfLoop(db: PrismaClient, loopId: string, escalationId: string) {
  return db.escalation.findFirst({ where: { id: escalationId, loopId } });
}

/** Open escalations, oldest first, with their loop's identity and request. */
export function openEscalations(db: PrismaClient, limit: number) {
  return db.escalation.findMany({
    where: { status: 'OPEN' },
    orderBy: [{ createdAt: 'asc' }, { sequence: 'asc' }],
    take: limit,
    include: { loop: { select: { workflowId: true, repoUrl: true, baseRef: true, input: true } } },
  });
}
