import { Context } from '@temporalio/activity';

/** Keeps heartbeating while `work` runs, so a long call neither looks like a dead worker nor misses a cancel. */
export async function whileHeartbeating<T>(work: Promise<T>, step: string, intervalMs = 5000): Promise<T> {
  const ctx = Context.current();
  const beat = () => ctx.heartbeat({ step, aliveAt: Date.now() });
  beat();
  const timer = setInterval(beat, intervalMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
