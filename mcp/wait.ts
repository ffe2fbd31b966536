import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, ConnectionError } from '../cli/api-client';
import type { LoopDetail } from '../cli/api-types';
import { TERMINAL_STATUSES, type LoopStatus } from '../domain/loop-state';

// Waiting for a loop: poll GET /v1/loops/:id until it ends, waits for a decision, or the time is up.
// An API that is briefly unreachable or busy (restarting, 429, 503) is asked again until the deadline.

export type WaitOutcome = 'ended' | 'awaiting_decision' | 'timed_out' | 'interrupted';

export interface WaitOptions {
  timeoutMs: number;
  pollIntervalMs: number;
  /** Aborted when the client cancels the call or the server stops: the wait ends 'interrupted'. */
  signal: AbortSignal;
  /** Called when the status, phase or iteration changed, and at least every `heartbeatMs` otherwise. */
  onProgress(loop: LoopDetail, elapsedMs: number): Promise<void>;
  heartbeatMs: number;
  now?: () => number;
}

export interface WaitResult {
  outcome: WaitOutcome;
  loop: LoopDetail;
  elapsedMs: number;
}

export async function waitForLoop(read: () => Promise<LoopDetail>, options: WaitOptions): Promise<WaitResult> {
  const now = options.now ?? Date.now;
  const start = now();
  const deadline = start + options.timeoutMs;
  let loop: LoopDetail | undefined;
  let lastState: string | undefined;
  let lastProgressAt = -Infinity;
  for (;;) {
    try {
      loop = await read();
    } catch (error) {
      if (!isTransient(error) || now() >= deadline) throw error;
    }
    const elapsedMs = now() - start;
    if (loop) {
      if (TERMINAL_STATUSES.includes(loop.status as LoopStatus)) return { outcome: 'ended', loop, elapsedMs };
      if (loop.status === 'AWAITING_DECISION') return { outcome: 'awaiting_decision', loop, elapsedMs };
      const state = `${loop.status} ${loop.phase} ${loop.iteration}`;
      if (state !== lastState || elapsedMs - lastProgressAt >= options.heartbeatMs) {
        lastState = state;
        lastProgressAt = elapsedMs;
        await options.onProgress(loop, elapsedMs);
      }
    }
    const remaining = deadline - now();
    if (remaining <= 0 && loop) return { outcome: 'timed_out', loop, elapsedMs };
    if (!(await pause(Math.max(0, Math.min(options.pollIntervalMs, remaining)), options.signal))) {
      if (loop) return { outcome: 'interrupted', loop, elapsedMs: now() - start };
      throw new Error('the wait was interrupted before the loop could be read');
    }
  }
}

function isTransient(error: unknown): boolean {
  return error instanceof ConnectionError || (error instanceof ApiError && error.transient);
}

/** Sleeps; false when `signal` aborted first. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
