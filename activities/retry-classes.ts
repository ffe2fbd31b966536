import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { DATABASE_UNREACHABLE, describeDatabaseError, isDatabaseUnreachable } from '../store/database-errors';

// Two classes of failure (docs/operations.md, "Outages"). An infrastructure failure — the database
// unreachable, the model provider answering 429 or 5xx or not at all — says nothing about the loop:
// it is retried without limit (the workflow's retry policies have none, workflows/activities.ts), with
// backoff up to 30 s, and the loop waits. Any other failure is a logic error, which a few more attempts
// rarely cure: once the activity has had its attempts, it fails for good and the loop's handling of a
// failed step takes over. Attempts lost to an outage count towards that number too.

/** The failure type of an attempt that could not reach the database. */
const DATABASE_UNAVAILABLE = 'DatabaseUnavailable';

/** ApplicationFailure types the model clients throw; retryable ones are the provider's outage (429, 5xx, unreachable). */
const PROVIDER_FAILURES = new Set(['ModelProviderError', 'MakerProviderError']);

type Activity = (...args: never[]) => Promise<unknown>;

/** The git steps between the loop's heavy phases (workflows/activities.ts `gitWork`). */
const GIT_STEPS = new Set(['prepareWorkspace', 'backtrack', 'prepareDelivery', 'deliver']);

/**
 * The attempts a logic error gets in a loop activity, as many as before the retry policies lost their
 * limit: 10 for a git step, 5 for a command or a model call; a record write (a local activity) keeps trying.
 */
export function loopLogicAttempts(info: { activityType: string; isLocal: boolean }): number | null {
  if (info.isLocal) return null;
  return GIT_STEPS.has(info.activityType) ? 10 : 5;
}

/** Where a loop's wait for an outage of the model provider is noted for people (store/loop-waiting.ts). */
export interface OutageNotes {
  waiting(loopId: string, reason: string): Promise<void>;
  over(loopId: string): Promise<void>;
}

/**
 * `activities` with their failures classed. `logicAttempts` says how many attempts a logic error gets
 * in an activity (null: as many as its retry policy allows). With `notes`, an attempt that meets the
 * model provider's outage says so on its loop, and the attempt that gets through after it clears that.
 */
export function withRetryClasses<T extends Record<string, Activity>>(
  logicAttempts: (info: { activityType: string; isLocal: boolean }) => number | null,
  activities: T,
  notes?: OutageNotes,
): T {
  const wrap =
    (activity: Activity): Activity =>
    async (...args) => {
      const { info } = Context.current();
      const loopId = loopOf(info.workflowExecution?.workflowId);
      try {
        const result = await activity(...args);
        if (notes && loopId && info.attempt > 1) await bestEffort(notes.over(loopId));
        return result;
      } catch (err) {
        const failure = classedFailure(err, info.attempt, logicAttempts(info));
        if (notes && loopId && isProviderOutage(failure))
          await bestEffort(
            notes.waiting(
              loopId,
              `the model provider (${info.activityType}, attempt ${info.attempt}; retried until it answers): ${(failure as Error).message}`,
            ),
          );
        throw failure;
      }
    };
  return Object.fromEntries(Object.entries(activities).map(([name, activity]) => [name, wrap(activity)])) as T;
}

/** The loop a workflow id names (domain/loop-request.ts `loopWorkflowId`); null for other workflows. */
function loopOf(workflowId: string | undefined): string | null {
  return workflowId?.startsWith('loop-') ? workflowId.slice('loop-'.length) : null;
}

/** A note for people must never change what the attempt answers: the database may be down too. */
async function bestEffort(note: Promise<void>): Promise<void> {
  await note.catch(() => undefined);
}

/**
 * What attempt `attempt` of an activity throws for `err`: an outage as a retryable failure saying so in
 * a sentence (the client's message, which quotes the failed call and the caller's code, stays out of
 * Temporal's history); the database's refusals in a sentence; any other logic error made final once
 * `logicAttempts` attempts have been made.
 */
export function classedFailure(err: unknown, attempt: number, logicAttempts: number | null): unknown {
  if (err instanceof CancelledFailure) return err;
  if (isDatabaseUnreachable(err))
    return ApplicationFailure.create({ type: DATABASE_UNAVAILABLE, message: DATABASE_UNREACHABLE });
  if (isProviderOutage(err)) return err;
  const database = describeDatabaseError(err);
  const failure = database ? ApplicationFailure.create({ type: 'DatabaseError', message: database }) : err;
  if (logicAttempts === null || attempt < logicAttempts) return failure;
  return ApplicationFailure.fromError(failure, { nonRetryable: true });
}

function isProviderOutage(err: unknown): boolean {
  return err instanceof ApplicationFailure && PROVIDER_FAILURES.has(err.type ?? '') && !err.nonRetryable;
}
