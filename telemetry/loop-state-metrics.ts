import { Counter, Gauge, Registry } from 'prom-client';
import type { PrismaClient } from '../store/db';
import { loopCountsByStatusAndPhase, openEscalationStats } from '../store/loop-state';
import { METRIC_PREFIX } from './registry';

// Loop state read from PostgreSQL at scrape time: one cheap grouped query for loops, one aggregate over
// the (status, createdAt) index for escalations. Each query is shared by the gauges that need it (one
// query per scrape, not one per gauge) and never runs twice at once (a scrape during a slow query waits
// for that one, so a hung database is not sent more). A scrape waits at most QUERY_TIMEOUT_MS for it:
// then it answers without the loops series (NaN for the escalation gauges) and counts a failure,
// instead of hanging.

export interface LoopStateQueries {
  loopsByStatusAndPhase(): Promise<Array<{ status: string; phase: string; count: number }>>;
  openEscalations(): Promise<{ count: number; oldestOpenedAt: Date | null }>;
}

export const QUERY_TIMEOUT_MS = 2000;

export function prismaLoopStateQueries(prisma: PrismaClient): LoopStateQueries {
  return {
    loopsByStatusAndPhase: () => loopCountsByStatusAndPhase(prisma),
    openEscalations: () => openEscalationStats(prisma),
  };
}

/** A registry with the loop-state gauges of one API instance, answered from `queries`. */
export function createLoopStateRegistry(
  queries: LoopStateQueries,
  options: { timeoutMs?: number; now?: () => number } = {},
): Registry {
  const timeoutMs = options.timeoutMs ?? QUERY_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  const registry = new Registry();
  const loopsQuery = singleFlight(() => queries.loopsByStatusAndPhase());
  const escalationsQuery = singleFlight(() => queries.openEscalations());
  // Every metric here collects through this: prom-client collects a registry's metrics concurrently, so
  // they all wait for the same refresh and read values from the same queries.
  const refresh = singleFlight(async () => {
    const [loopRows, open] = await Promise.allSettled([
      bounded(loopsQuery(), timeoutMs, 'loops'),
      bounded(escalationsQuery(), timeoutMs, 'escalations'),
    ]);
    loops.reset();
    if (loopRows.status === 'fulfilled')
      for (const g of loopRows.value) loops.set({ status: g.status, phase: g.phase }, g.count);
    else failures.inc({ query: 'loops' });
    if (open.status === 'fulfilled') {
      escalationsOpen.set(open.value.count);
      oldestOpen.set(open.value.oldestOpenedAt ? Math.max(0, now() - open.value.oldestOpenedAt.getTime()) / 1000 : 0);
    } else {
      // Unknown, not zero (a gauge without labels always has a value).
      escalationsOpen.set(Number.NaN);
      oldestOpen.set(Number.NaN);
      failures.inc({ query: 'escalations' });
    }
  });
  const collect = async () => {
    await refresh();
  };

  const failures = new Counter({
    name: `${METRIC_PREFIX}state_query_failures_total`,
    help: 'Scrape-time loop-state queries that failed or took longer than 2 s, by query; that scrape had no loops series, or NaN escalation gauges.',
    labelNames: ['query'] as const,
    registers: [registry],
    collect,
  });
  const loops = new Gauge({
    name: `${METRIC_PREFIX}loops`,
    help: 'Loops recorded in PostgreSQL by status and phase, at scrape time.',
    labelNames: ['status', 'phase'] as const,
    registers: [registry],
    collect,
  });
  const escalationsOpen = new Gauge({
    name: `${METRIC_PREFIX}escalations_open`,
    help: 'Escalations waiting for a human decision, at scrape time (NaN when the query failed).',
    registers: [registry],
    collect,
  });
  const oldestOpen = new Gauge({
    name: `${METRIC_PREFIX}escalation_oldest_open_age_seconds`,
    help: 'How long the oldest open escalation has waited for a decision (0 when none is open; NaN when the query failed), at scrape time.',
    registers: [registry],
    collect,
  });
  return registry;
}

/** Calls `fn` only when no earlier call is still running; callers meanwhile share that call. */
function singleFlight<T>(fn: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  return () => {
    running ??= fn().finally(() => {
      running = null;
    });
    return running;
  };
}

/** `work`, or a rejection after `ms` (the query itself goes on; singleFlight keeps later scrapes from starting more). */
function bounded<T>(work: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the ${name} query took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
