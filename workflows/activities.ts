import { proxyActivities } from '@temporalio/workflow';
import type { LoopActivities } from '../activities';

// How the workflow calls its activities: every call bounded in time, retried with backoff.

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 };

/** Short bookkeeping activities: writes to Postgres, git set-up, reading the diff. */
export const bookkeeping = proxyActivities<LoopActivities>({
  startToCloseTimeout: '2m',
  retry: { ...retry, maximumAttempts: 10 },
});

/** Activities that run commands or call models: heartbeat so a dead worker or a cancel is noticed in seconds. */
export const work = proxyActivities<LoopActivities>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: '20s',
  cancellationType: 'WAIT_CANCELLATION_COMPLETED',
  retry,
});
