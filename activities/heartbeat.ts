import { Context } from '@temporalio/activity';

/** Keeps heartbeating while `work` runs, so a long call neither looks like a dead worker nor misses a cancel. */
export async function whileHeartbeating<T>(work: Promise<T>, details: unknown, intervalMs = 5000): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat(details);
  const timer = setInterval(() => ctx.heartbeat(details), intervalMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
