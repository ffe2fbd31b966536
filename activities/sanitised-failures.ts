import { CancelledFailure } from '@temporalio/activity';
import { sanitise } from '../domain/sanitise';

// What an activity throws reaches Temporal (history, Web UI, the workflow's error handling) as its
// message and stack, so both leave sanitised. The error is rewritten in place: its class, failure
// type, nonRetryable flag and details must stay exactly what the activity threw.

const MAX_CAUSE_DEPTH = 8;

type Activity = (...args: never[]) => Promise<unknown>;

/** `activities` with every error they throw sanitised; a cancellation passes through untouched. */
export function withSanitisedFailures<T extends Record<string, Activity>>(activities: T): T {
  const wrap =
    (activity: Activity): Activity =>
    async (...args) => {
      try {
        return await activity(...args);
      } catch (err) {
        throw sanitiseFailure(err);
      }
    };
  return Object.fromEntries(Object.entries(activities).map(([name, activity]) => [name, wrap(activity)])) as T;
}

export function sanitiseFailure(err: unknown): unknown {
  if (err instanceof CancelledFailure) return err;
  if (typeof err === 'string') return sanitise(err);
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < MAX_CAUSE_DEPTH; depth++, e = e.cause) {
    e.message = sanitise(e.message);
    if (e.stack) e.stack = sanitise(e.stack);
  }
  return err;
}
