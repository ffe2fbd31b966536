import type { PrismaClient } from './db';

// The API's reads of whole loops: its list, its detail, an iteration's explanation and the timeline.

/** Loops newest first, of one status or all. */
export function loopsNewestFirst(db: PrismaClient, query: { status?: string; limit: number }) {
  return db.loop.findMany({
    where: query.status ? { status: query.status } : {},
    orderBy: { createdAt: 'desc' },
    take: query.limit,
  });
}

/** The loop with everything its detail view shows, or null. */
export function loopWithHistory(db: PrismaClient, id: string) {
  return db.loop.findUnique({
    where: { id },
    include: {
      contractVersions: { orderBy: { version: 'asc' } },
      iterations: {
        orderBy: { sequence: 'asc' },
        include: {
          verdict: true,
          evidence: { orderBy: { gateOrder: 'asc' } },
          findings: { orderBy: { findingId: 'asc' } },
        },
      },
      escalations: { orderBy: { sequence: 'asc' }, include: { decisions: true } },
      executions: { where: { role: 'decision' }, orderBy: { createdAt: 'asc' } },
      // Set-up in the maker's workspace belongs to the loop, not to an iteration.
      evidence: { where: { iterationId: null }, orderBy: [{ startTime: 'asc' }, { gateOrder: 'asc' }] },
    },
  });
}

/** The iteration with its verdict and what the explanation quotes of its findings, or null. */
export function iterationWithFindings(db: PrismaClient, loopId: string, sequence: number) {
  return db.iteration.findUnique({
    where: { loopId_sequence: { loopId, sequence } },
    include: {
      verdict: true,
      findings: {
        orderBy: { findingId: 'asc' },
        select: {
          findingId: true,
          source: true,
          rule: true,
          location: true,
          title: true,
          severity: true,
          validity: true,
        },
      },
    },
  });
}

/** Everything the loop's timeline is made of, read at once (large texts left out). */
export function timelineRows(db: PrismaClient, loopId: string) {
  return Promise.all([
    db.loopEvent.findMany({ where: { loopId }, orderBy: { createdAt: 'asc' } }),
    db.contractVersion.findMany({
      where: { loopId },
      orderBy: { version: 'asc' },
      select: { id: true, version: true, hash: true, reason: true, createdAt: true },
    }),
    db.evidence.findMany({
      where: { loopId },
      select: {
        id: true,
        gate: true,
        gateOrder: true,
        status: true,
        source: true,
        sourceDetail: true,
        command: true,
        startTime: true,
        endTime: true,
        exitCode: true,
        timeoutStatus: true,
        testCounts: true,
        failureReason: true,
        createdAt: true,
        iteration: { select: { sequence: true } },
      },
    }),
    db.executionRecord.findMany({ where: { loopId }, orderBy: { createdAt: 'asc' } }),
    db.verdict.findMany({
      where: { loopId },
      include: { iteration: { select: { sequence: true } } },
      orderBy: { createdAt: 'asc' },
    }),
    db.escalation.findMany({ where: { loopId }, include: { decisions: true }, orderBy: { sequence: 'asc' } }),
    db.loop.findUnique({ where: { id: loopId }, select: { waitingFor: true, waitingSince: true } }),
  ]);
}
