import { Context } from '@temporalio/activity';
import { sanitise } from '../domain/sanitise';
import { DATABASE_UNREACHABLE } from '../store/database-errors';
import type { ConnectWait } from '../store/db';

// A database outage makes the worker's activities wait, not fail (docs/operations.md, "Outages"): a
// query inside an activity whose connection cannot be opened waits for the database for as long as the
// attempt lives — until the activity is cancelled (the loop was cancelled, or Temporal stopped hearing
// from it) or its start-to-close deadline passes — while the heavy activities keep heartbeating. So a
// maker whose result cannot be stored yet is not run again: its result is stored when the database is
// back. Outside an activity (the workspace janitor) a query fails at once.

/** The worker's wait: inside an activity, for as long as its attempt lives; `log` says when it starts and ends. */
export function activityDatabaseWait(log: (line: string) => void): ConnectWait {
  return {
    until: attemptLifetime,
    onUnreachable: (err) =>
      log(`${DATABASE_UNREACHABLE} (${sanitise(err.message)}): activities wait for it and carry on when it is back`),
    onReachable: (waitedMs) =>
      log(`the database is reachable again after ${Math.round(waitedMs / 1000)} s: waiting activities carry on`),
  };
}

/** The current activity attempt's cancellation and deadline; null outside an activity. */
function attemptLifetime(): { signal: AbortSignal; deadline: number } | null {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    // Not inside an activity.
    return null;
  }
  const { startToCloseTimeoutMs, currentAttemptScheduledTimestampMs } = context.info;
  const deadline =
    startToCloseTimeoutMs && currentAttemptScheduledTimestampMs
      ? currentAttemptScheduledTimestampMs + startToCloseTimeoutMs
      : Number.POSITIVE_INFINITY;
  return { signal: context.cancellationSignal, deadline };
}
