import type { PrismaClient } from './db';

// The loop-state gauges' reads: one grouped query for loops, one aggregate over the (status, createdAt)
// index for escalations.

export async function loopCountsByStatusAndPhase(
  db: PrismaClient,
): Promise<Array<{ status: string; phase: string; count: number }>> {
  const groups = await db.loop.groupBy({ by: ['status', 'phase'], _count: { _all: true } });
  return groups.map((g) => ({ status: g.status, phase: g.phase, count: g._count._all }));
}

export async function openEscalationStats(db: PrismaClient): Promise<{ count: number; oldestOpenedAt: Date | null }> {
  const open = await db.escalation.aggregate({
    where: { status: 'OPEN' },
    _count: { _all: true },
    _min: { createdAt: true },
  });
  return { count: open._count._all, oldestOpenedAt: open._min.createdAt };
}
