import { CancelledFailure, type Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { activityDuration } from './loop-metrics';

/** An activity's outcome as a label: completed, cancelled (the loop was cancelled, or the attempt timed out) or failed. */
export function activityOutcome(err: unknown): 'cancelled' | 'failed' {
  return err instanceof CancelledFailure ? 'cancelled' : 'failed';
}

/**
 * Times every activity execution (each attempt; local activities too) by its type: one interceptor in
 * the worker instead of a timer in each activity.
 */
export const activityMetricsInterceptor: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      const end = activityDuration.startTimer({ activity: ctx.info.activityType });
      try {
        const result = await next(input);
        end({ outcome: 'completed' });
        return result;
      } catch (err) {
        end({ outcome: activityOutcome(err) });
        throw err;
      }
    },
  },
});
