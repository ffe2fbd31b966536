import v8 from 'node:v8';
import type { ServiceConfig } from '../config/service-config';

// What bounds the workflows worker's memory. Its loops live in V8 heaps (the SDK's workflow thread holds
// the cached ones; the main thread, the record writes). Left to Node's default limit, a quarter of the
// machine's memory up to 4 GiB per heap, V8 lets garbage pile up that far before it collects hard, and the
// RSS grows with every loop that passes through, parked or not. A heap limit keeps the garbage small; the
// workflow cache is sized to fit in it, and a loop evicted from the cache is replayed from its history.

/**
 * A cached loop's share of the heap: its workflow context and state, with room for its tasks' garbage.
 * Measured (bench/parked-loops.mjs): 200 cached loops took the worker from 280 to 520–600 MiB RSS.
 */
export const CACHED_LOOP_MB = 2;
/** The heap the worker needs apart from its cache: the workflow bundle, the SDK, Prisma, the metrics. */
export const WORKER_BASE_MB = 112;
export const MIN_CACHED_LOOPS = 10;
export const MAX_CACHED_LOOPS = 1000;

/** Node options a worker process of `role` starts with: the workflows worker's heap limit. */
export function workerNodeArgs(role: ServiceConfig['worker']['role'], config: Readonly<ServiceConfig>): string[] {
  return role === 'workflows' ? [`--max-old-space-size=${config.worker.workflowsHeapMb}`] : [];
}

/** The loops a heap limit holds in the workflow cache (CACHED_LOOP_MB each past WORKER_BASE_MB), within bounds. */
export function cacheSizeForHeap(heapLimitMb: number): number {
  const fits = Math.floor((heapLimitMb - WORKER_BASE_MB) / CACHED_LOOP_MB);
  return Math.min(MAX_CACHED_LOOPS, Math.max(MIN_CACHED_LOOPS, fits));
}

/** This process's V8 heap limit in MB (what --max-old-space-size set, or Node's default). */
export function heapLimitMb(): number {
  return Math.round(v8.getHeapStatistics().heap_size_limit / 1024 ** 2);
}

/**
 * The workflow cache: WORKER_MAX_CACHED_WORKFLOWS when set, else what WORKFLOWS_WORKER_HEAP_MB holds — or
 * this process's real heap limit when smaller. A worker started without the flag (Node's default limit
 * is far larger) keeps the cache it would have with it, not one its RSS could not afford.
 */
export function workflowCacheSize(config: Readonly<ServiceConfig>, heapMb = heapLimitMb()): number {
  return config.temporal.maxCachedWorkflows ?? cacheSizeForHeap(Math.min(heapMb, config.worker.workflowsHeapMb));
}
