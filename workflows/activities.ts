import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { LoopActivities } from '../activities';

// How the workflow calls its activities: every call bounded in time, retried with backoff.

/**
 * No attempt limit: an infrastructure failure (the database unreachable, the model provider's outage) is
 * retried until it passes, 30 s apart at most. A logic error fails for good after its attempts (5 for a
 * command or model call, 10 for a git step): the activities decide, since they can tell the two apart
 * (activities/retry-classes.ts).
 */
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };

/**
 * Writes of the loop's records to Postgres (progress, contract, verdict, escalation, decision), each well
 * under a second: local activities, run by the worker that runs the workflow task. They cost no task-queue
 * round trip and no rows in the Web UI's timeline, and a worker lost mid-write is replaced when the workflow
 * task times out (10 s), not when a 2-minute activity timeout expires. No attempt limit: a database outage
 * makes loops wait, it does not fail them; retries back off to 30 s apart.
 */
export const records = proxyLocalActivities<LoopActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * Git work between the heavy phases (cloning, inspecting the diff, backtracking, delivering): seconds,
 * heartbeating, so a dead worker is noticed in 20 s whatever the start-to-close bound of the call.
 */
export const gitWork = proxyActivities<LoopActivities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '20s',
  retry,
});

/** Activities that run commands or call models: heartbeat so a dead worker or a cancel is noticed in seconds. */
export const work = proxyActivities<LoopActivities>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: '20s',
  cancellationType: 'WAIT_CANCELLATION_COMPLETED',
  retry,
});
