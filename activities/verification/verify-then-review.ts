import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { NO_USAGE, type Usage } from '../../domain/budget';
import type { ReviewOutcome } from '../../domain/judge';
import { reviewSkipReason } from '../../domain/review-when';
import { sanitise } from '../../domain/sanitise';
import type { ActivityDeps } from '../deps';
import { early } from '../in-order';
import { inPhase, type ProgressInput } from '../progress';
import { runReview, startReviewReads, type ReviewInput, type ReviewReads } from '../review/run-review';
import {
  runVerification,
  type StartedVerification,
  type VerificationInput,
  type VerificationResult,
} from './run-verification';

// A change every gate passed is reviewed by the verification's own activity: one hand-over between
// activities less per iteration (docs/performance.md), and the review's reads run beside the gates.
// A review that fails here is not retried here. A failure a retry may cure (the provider or the database
// down, an error) leaves the review to the workflow's review activity, which is retried and waits out an
// outage as ever (workflows/iteration.ts); one it cannot (a refused key) is the review's outcome, FAILED,
// as the review activity's failure would have been, and nothing is asked again.

/** The review the workflow asks the verification to do once the gates passed; `progress`: the move into REVIEW. */
export type ReviewAfterGates = Pick<ReviewInput, 'reviewer' | 'profile' | 'priorSignatures'> & {
  progress: ProgressInput;
};

export interface VerifyThenReviewInput extends VerificationInput {
  /** Absent or null: the workflow reviews (or skips the review) itself. */
  review?: ReviewAfterGates | null;
}

/** In the maker's activity the review is decided beside the gates, from what its maker spent. */
export type VerifyThenReviewInMaker = VerificationInput & { review: Promise<ReviewAfterGates | null> };

/** REVIEWED: the review's outcome (FAILED for a failure no retry cures) and what it spent. NOT_REVIEWED: left to the review activity, and why. */
export type ReviewInVerification =
  { status: 'REVIEWED'; outcome: ReviewOutcome; usage: Usage } | { status: 'NOT_REVIEWED'; reason: string };

/** The verification; with `review` asked for and no gate failed, the review too (absent otherwise). */
export async function verifyThenReview(
  deps: ActivityDeps,
  { review: maybeAsked, ...verification }: VerifyThenReviewInput | VerifyThenReviewInMaker,
  /** What the caller started for the verification. */
  started: StartedVerification = {},
): Promise<VerificationResult & { review?: ReviewInVerification }> {
  if (!maybeAsked) return runVerification(deps, verification, undefined, started);
  const { loopId, sequence, contractVersion, checkpointCommit } = verification;
  // Started as the first command starts, once: beside the checkout they would only slow it down. The
  // reads do not depend on who reviews; a review the maker's spending rules out leaves them unused.
  let reads: ReviewReads | undefined;
  const decided = early(Promise.resolve(maybeAsked));
  const verified = await runVerification(
    deps,
    verification,
    () => void (reads ??= startReviewReads(deps, { loopId, contractVersion, checkpointCommit })),
    started,
  );
  const asked = await decided;
  if (!asked || reviewSkipReason(verified) !== null) return verified;
  const { progress: _, ...review } = asked;
  const input: ReviewInput = { loopId, sequence, contractVersion, checkpointCommit, ...review };
  try {
    const reviewed = await inPhase(deps, asked, () => runReview(deps, input, reads));
    return { ...verified, review: { status: 'REVIEWED', ...reviewed } };
  } catch (err) {
    if (err instanceof CancelledFailure || Context.current().cancellationSignal.aborted) throw err;
    const reason = sanitise(err instanceof Error ? err.message : String(err));
    // What the workflow makes of a review activity's final failure (workflows/iteration.ts reviewOrFailure).
    if (err instanceof ApplicationFailure && err.nonRetryable)
      return { ...verified, review: { status: 'REVIEWED', outcome: { status: 'FAILED', reason }, usage: NO_USAGE } };
    Context.current().log.warn('the review in the verification failed; the workflow asks the review activity', {
      reason,
    });
    return { ...verified, review: { status: 'NOT_REVIEWED', reason } };
  }
}
