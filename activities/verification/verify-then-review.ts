import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { NO_USAGE, type Usage } from '../../domain/budget';
import type { ReviewOutcome } from '../../domain/judge';
import { reviewSkipReason } from '../../domain/review-when';
import { sanitise } from '../../domain/sanitise';
import type { ActivityDeps } from '../deps';
import { inPhase, type ProgressInput } from '../progress';
import { runReview, startReviewReads, type ReviewInput, type ReviewReads } from '../review/run-review';
import { runVerification, type VerificationInput, type VerificationResult } from './run-verification';

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

/** REVIEWED: the review's outcome (FAILED for a failure no retry cures) and what it spent. NOT_REVIEWED: left to the review activity, and why. */
export type ReviewInVerification =
  { status: 'REVIEWED'; outcome: ReviewOutcome; usage: Usage } | { status: 'NOT_REVIEWED'; reason: string };

/** The verification; with `review` asked for and no gate failed, the review too (absent otherwise). */
export async function verifyThenReview(
  deps: ActivityDeps,
  { review: asked, ...verification }: VerifyThenReviewInput,
  /** The checkout of the checkpoint, when the caller started it. */
  startedCheckout?: Promise<string>,
): Promise<VerificationResult & { review?: ReviewInVerification }> {
  if (!asked) return runVerification(deps, verification, undefined, startedCheckout);
  const { progress: _, ...review } = asked;
  const { loopId, sequence, contractVersion, checkpointCommit } = verification;
  const input: ReviewInput = { loopId, sequence, contractVersion, checkpointCommit, ...review };
  // Started as the first command starts, once: beside the checkout they would only slow it down.
  let reads: ReviewReads | undefined;
  const verified = await runVerification(
    deps,
    verification,
    () => void (reads ??= startReviewReads(deps, input)),
    startedCheckout,
  );
  if (reviewSkipReason(verified) !== null) return verified;
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
