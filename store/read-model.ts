import type { PrismaClient } from './db';
import type { FeedSource } from './loop-feed';

// The API's reads of whole loops: its list, its detail, an iteration's explanation and the timeline.

/** Loops newest first, of one status or all. */
export function loopsNewestFirst(db: PrismaClient, query: { status?: string; limit: number }) {
  return db.loop.findMany({
    where: query.status ? { status: query.status } : {},
    orderBy: { createdAt: 'desc' },
    take: query.limit,
  });
}

// A gate's output has endpoints of its own: a detail polled while the loop runs does not carry it.
const GATE_OUTPUT = { stdout: true, stderr: true } as const;
// What the detail view shows of a finding (api/loop-views.ts); the rest is the iteration's explanation's.
const FINDING_SHOWN = {
  findingId: true,
  title: true,
  topic: true,
  severity: true,
  validity: true,
  signature: true,
  source: true,
  rule: true,
  location: true,
  evidence: true,
  failureScenario: true,
} as const;

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
          evidence: { orderBy: { gateOrder: 'asc' }, omit: GATE_OUTPUT },
          findings: { orderBy: { findingId: 'asc' }, select: FINDING_SHOWN },
        },
      },
      escalations: { orderBy: { sequence: 'asc' }, include: { decisions: true } },
      executions: {
        where: { role: 'decision' },
        orderBy: { createdAt: 'asc' },
        select: { provider: true, detail: true, createdAt: true },
      },
      // Set-up in the maker's workspace belongs to the loop, not to an iteration.
      evidence: {
        where: { iterationId: null },
        orderBy: [{ startTime: 'asc' }, { gateOrder: 'asc' }],
        omit: GATE_OUTPUT,
      },
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

/**
 * The timeline's rows a reader needs, by the table they are in (store/loop-feed.ts names them): only the
 * rows of these ids, except where an event depends on its neighbours — every phase when one is due (they
 * number iterations and last until the next), every verdict and escalation when one of those or a decision
 * is (an escalation's iteration is its verdict's).
 */
export type DueRows = ReadonlyMap<FeedSource, readonly string[]>;

/** Everything the loop's timeline is made of, read at once (large texts left out); with `due`, only what it needs. */
export function timelineRows(db: PrismaClient, loopId: string, due?: DueRows) {
  const wanted = (table: FeedSource) => !due || due.has(table);
  const ids = (table: FeedSource) => (due ? { id: { in: [...(due.get(table) ?? [])] } } : {});
  const escalationsWanted = wanted('Verdict') || wanted('Escalation') || wanted('Decision');
  return Promise.all([
    wanted('LoopEvent') ? db.loopEvent.findMany({ where: { loopId }, orderBy: { createdAt: 'asc' } }) : [],
    wanted('ContractVersion')
      ? db.contractVersion.findMany({
          where: { loopId, ...ids('ContractVersion') },
          orderBy: { version: 'asc' },
          select: { id: true, version: true, hash: true, reason: true, createdAt: true },
        })
      : [],
    wanted('Evidence')
      ? db.evidence.findMany({
          where: { loopId, ...ids('Evidence') },
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
        })
      : [],
    wanted('ExecutionRecord')
      ? db.executionRecord.findMany({ where: { loopId, ...ids('ExecutionRecord') }, orderBy: { createdAt: 'asc' } })
      : [],
    escalationsWanted
      ? db.verdict.findMany({
          where: { loopId },
          include: { iteration: { select: { sequence: true } } },
          orderBy: { createdAt: 'asc' },
        })
      : [],
    escalationsWanted
      ? db.escalation.findMany({ where: { loopId }, include: { decisions: true }, orderBy: { sequence: 'asc' } })
      : [],
    wanted('LoopWaiting')
      ? db.loop.findUnique({ where: { id: loopId }, select: { waitingFor: true, waitingSince: true } })
      : null,
  ]);
}
