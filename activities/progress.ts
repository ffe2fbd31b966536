import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { TERMINAL_STATUSES } from '../domain/loop-state';
import type { ActivityDeps } from './deps';
import { moveLoop, type LoopState } from '../store/progress';
import { inOrder } from './in-order';

export interface ProgressInput extends LoopState {
  /**
   * The move's number in its workflow run (1, 2, …), counted by the workflow: every attempt of the move's
   * write shares it, whatever activity carries it.
   */
  move: number;
}

/**
 * Mirrors the workflow's state into the read model the API serves, and records the transition as a
 * phase event of the loop's timeline (LoopEvent) in the same transaction.
 *
 * `eventKey` makes the event idempotent: by default the workflow run id and the move's number, which every
 * attempt of the write shares — a local activity retried after a backoff timer too, though it runs under a
 * new activity id. Outside an activity (unit tests, scripts) each call gets its own key unless the caller
 * names one.
 *
 * A write that lands late — an earlier move than the loop's last, or any move after its end — changes
 * nothing and records no event (store/progress.ts): the loop's state and timeline never go backwards.
 */
export async function recordProgress(
  deps: ActivityDeps,
  input: ProgressInput,
  eventKey: string | null = activityEventKey(input.move),
): Promise<void> {
  // When the move happened: the phase's work may run beside this write, and its rows come after the move.
  const at = new Date().toISOString();
  const runId = callingRunId();
  const exists = await moveLoop(deps.prisma, {
    ...input,
    key: eventKey ?? `adhoc:${randomUUID()}`,
    at,
    // A loop that ends cancelled or failed while a human was asked closes that question with it, so
    // inboxes never list a decision nobody can make any more.
    closesEscalations: input.status === 'CANCELLED' || input.status === 'FAILED',
    ends: TERMINAL_STATUSES.includes(input.status),
    run: runId ? { runId, move: input.move } : null,
  });
  if (!exists) throw new Error(`loop ${input.loopId} does not exist: its progress cannot be recorded`);
}

/** `<workflow run id>:move-<move>`; null outside an activity started by a workflow. */
export function activityEventKey(move: number): string | null {
  const runId = callingRunId();
  return runId ? `${runId}:move-${move}` : null;
}

/** The workflow run the current activity acts for; null outside one. */
function callingRunId(): string | null {
  try {
    return Context.current().info.workflowExecution?.runId ?? null;
  } catch {
    // Not inside an activity.
    return null;
  }
}

/** The input of a phase's first activity, which records the loop's entry into the phase. */
export type InPhase<T> = T & { progress: ProgressInput };

/**
 * Records the entry into the phase while the phase's work runs: one round trip from the workflow, not two,
 * and no wait for the write (nothing in the work reads it). Both settle before the activity ends; the
 * work's failure comes first.
 */
export async function inPhase<T>(
  deps: ActivityDeps,
  input: { progress: ProgressInput },
  work: () => Promise<T>,
): Promise<T> {
  // Started first: the entry is stamped before the work begins.
  const entry = recordProgress(deps, input.progress);
  const [result] = await inOrder([work(), entry]);
  return result;
}
