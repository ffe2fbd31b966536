import { CancelledFailure, Context } from '@temporalio/activity';
import { addUsage, budgetExhausted, type Budget, type Usage } from '../domain/budget';
import type { FindingSummary } from '../domain/ledger';
import { sanitise } from '../domain/sanitise';
import type { ActivityDeps } from './deps';
import { runMaker, type CheckpointInspection, type MakerInput, type MakerResult } from './maker';
import { early } from './in-order';
import { inPhase, type ProgressInput } from './progress';
import { checkoutAt, movedCheckout } from './verification/verification-checkout';
import type { StartedVerification, VerificationResult } from './verification/run-verification';
import { verifyThenReview, type ReviewAfterGates, type ReviewInVerification } from './verification/verify-then-review';

// The gates run in the maker's own activity, on the checkpoint it just made: one hand-over between
// activities less per iteration (docs/performance.md). The maker's part stays idempotent per (loop,
// sequence), so a retry of the whole activity (a lost worker) returns the stored checkpoint and verifies
// it. A verification that fails here is not retried here: the workflow asks the verification activity,
// under the same move into VERIFY, which is retried as ever (workflows/iteration.ts).

/** The verification the workflow asks of the maker's activity; `progress`: the move into VERIFY. */
export interface VerifyAfterMaker {
  progress: ProgressInput;
  /** Asked unless the maker's usage spends the budget (`budget`, with `usageBefore` the loop's before the maker). */
  review: ReviewAfterGates;
  budget: Budget;
  usageBefore: Usage;
}

export interface MakerThenVerifyInput extends MakerInput, CheckpointInspection {
  /** Absent: the workflow verifies the checkpoint itself. The gates are the inspection's. */
  verify?: VerifyAfterMaker;
}

/** VERIFIED: what the verification (and its review, if any) found. NOT_VERIFIED: left to the verification activity, and why. */
export type VerificationInMaker =
  | { status: 'VERIFIED'; result: VerificationResult & { review?: ReviewInVerification } }
  | { status: 'NOT_VERIFIED'; reason: string };

export type MakerThenVerifyResult = MakerResult & { inspected: FindingSummary[]; verification?: VerificationInMaker };

/** The maker's iteration; with `verify` asked for, the verification of its checkpoint too. */
export async function makerThenVerify(
  deps: ActivityDeps,
  { verify: asked, ...maker }: MakerThenVerifyInput,
): Promise<MakerThenVerifyResult> {
  if (!asked) return runMaker(deps, maker);
  // The checkout the gates run in is made at the start commit while the agent works (once the previous
  // one is out of its way: that removal renames the checkout's path aside). Once the checkpoint is
  // committed, the checkout is moved to it (only what the agent changed is written) and the verification
  // starts; as its first command runs, the maker's result and the inspection's findings are stored. It
  // waits for those rows only to store its own end.
  let atStart: Promise<string> | undefined;
  let verifying: Promise<VerificationInMaker> | undefined;
  const making: Promise<MakerResult & { inspected: FindingSummary[] }> = runMaker(deps, maker, {
    beforeAgent: ({ startCommit, workspace, previousCheckoutGone }) => {
      const make = () => checkoutAt(deps, maker.loopId, workspace, startCommit);
      atStart = early(previousCheckoutGone.then(make, make));
    },
    afterCheckpoint: ({ commit, workspace, iterationId, loop, fresh }) => {
      const checkout = atStart && early(atStart.then((dir) => movedCheckout(deps, workspace, dir, commit)));
      const storing = { iterationId, stored: making, loop, fresh };
      let besideGates!: () => void;
      const underway = new Promise<void>((resolve) => (besideGates = resolve));
      verifying = early(verifyMade(deps, asked, maker, commit, making, { checkout, storing, besideGates }));
      // The maker's own reads and writes wait until the first gate runs (or the verification asks for them,
      // or ended): on a busy machine they would only slow the checkout down.
      return Promise.race([underway, verifying.then(() => undefined)]);
    },
  });
  let made: MakerResult & { inspected: FindingSummary[] };
  try {
    made = await making;
  } catch (err) {
    // Nothing of this attempt outlives it.
    await Promise.allSettled([atStart, verifying]);
    throw err;
  }
  // A retry that found the iteration made verifies its stored checkpoint here.
  const verification = await (verifying ??
    verifyMade(deps, asked, maker, made.checkpointCommit, Promise.resolve(made)));
  return { ...made, verification };
}

/** The verification (and review) of the maker's checkpoint; a failure is the workflow's to ask again. */
async function verifyMade(
  deps: ActivityDeps,
  asked: VerifyAfterMaker,
  maker: MakerInput & CheckpointInspection,
  checkpointCommit: string,
  made: Promise<MakerResult>,
  started: StartedVerification = {},
): Promise<VerificationInMaker> {
  // Reviewed unless the maker's usage spent the budget: known long before the gates end.
  const review = early(
    made.then((m) =>
      budgetExhausted(asked.budget, addUsage(asked.usageBefore, m.usage)) !== null ? null : asked.review,
    ),
  );
  try {
    const result = await inPhase(deps, asked, () =>
      verifyThenReview(
        deps,
        {
          loopId: maker.loopId,
          sequence: maker.sequence,
          contractVersion: maker.contractVersion,
          gates: maker.inspect.gates,
          checkpointCommit,
          review,
        },
        started,
      ),
    );
    return { status: 'VERIFIED', result };
  } catch (err) {
    if (err instanceof CancelledFailure || Context.current().cancellationSignal.aborted) throw err;
    const reason = sanitise(err instanceof Error ? err.message : String(err));
    Context.current().log.warn('the verification in the maker activity failed: the workflow asks it again', { reason });
    return { status: 'NOT_VERIFIED', reason };
  }
}
