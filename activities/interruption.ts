import { Context } from '@temporalio/activity';

/**
 * Why the running activity was cancelled when its loop did not ask for it — its worker shut down and the
 * grace period ran out, or Temporal gave the attempt up — so its run is recorded as INTERRUPTED (it runs
 * again) rather than CANCELLED. Null when the loop cancelled it, or nothing did.
 */
export function interruptionCause(): string | null {
  const details = Context.current().cancellationDetails;
  if (!details || details.cancelRequested) return null;
  if (details.workerShutdown) return 'its worker shut down and the grace period (SHUTDOWN_GRACE_SECONDS) ran out';
  if (details.timedOut || details.notFound)
    return 'Temporal had given this attempt up (its heartbeats stopped arriving)';
  if (details.paused) return 'the activity was paused';
  if (details.reset) return 'the activity was reset';
  return null;
}
