import { deprecatePatch, isCancellation, patched } from '@temporalio/workflow';
import { addUsage, budgetExhausted, NO_USAGE, type Usage } from '../domain/budget';
import { computeVerdict, type JudgeReport, type ReviewOutcome } from '../domain/judge';
import type { FindingSummary } from '../domain/ledger';
import { describeProof } from '../domain/proof';
import { reviewTimeoutSeconds } from '../domain/review-limits';
import { reviewSkipReason } from '../domain/review-when';
import { touchesSetupInputs } from '../domain/setup';
import type { LoopActivities } from '../activities';
import type { VerifyAfterMaker } from '../activities/maker-then-verify';
import type { ProgressInput } from '../activities/progress';
import { work } from './activities';
import { withSummary, type LoopRun } from './loop-run';
import { INSPECT_IN_MAKER_ACTIVITY, REVIEW_IN_VERIFICATION, VERIFY_IN_MAKER_ACTIVITY } from './patches';

// One iteration: the maker changes the workspace, the gates verify it, the reviewer reviews it, the judge decides.

type MakerResult = Awaited<ReturnType<LoopActivities['runMaker']>>;
/** What verification and the judge read of a maker's result (a change replayed onto a moved base has no maker). */
export type MadeChange = Pick<
  MakerResult,
  'checkpointCommit' | 'inspected' | 'noChange' | 'diffHash' | 'cumulativeDiffEmpty' | 'agentReport'
>;
type VerificationSummary = Awaited<ReturnType<LoopActivities['runVerification']>>;
type ReviewAfterGates = NonNullable<Parameters<LoopActivities['runVerification']>[0]['review']>;
export type IterationState = LoopRun['state']['iterations'][number];

export interface IterationOutcome {
  report: JudgeReport;
  maker: MakerResult;
  /** Tampering and scope findings of the checkpoint, and what the frozen tests showed. */
  systemFindings: FindingSummary[];
  review: ReviewOutcome;
}

export async function iterate(run: LoopRun): Promise<IterationOutcome> {
  const { state } = run;
  state.sequence += 1;
  state.roundIteration += 1;
  state.iterations.push({
    sequence: state.sequence,
    roundIteration: state.roundIteration,
    contractVersion: state.contractVersion,
    checkpointCommit: null,
    verdict: null,
    trigger: null,
  });
  const iteration = state.iterations[state.iterations.length - 1]!;

  const { maker, asked } = await runMaker(run, patched(VERIFY_IN_MAKER_ACTIVITY));
  iteration.checkpointCommit = maker.checkpointCommit;
  const { verification, systemFindings, reviewMove } =
    maker.verification?.status === 'VERIFIED' && asked
      ? verifiedByMaker(maker, maker.verification.result, asked)
      : await verify(run, maker, {
          // Asked of the verification unless the budget is spent already: the maker's usage is the last added.
          withReview:
            (asked !== null || patched(REVIEW_IN_VERIFICATION)) && !budgetExhausted(run.request.budget, run.usage),
          moves: asked,
        });
  const review = await reviewUnlessSettled(run, maker, verification, reviewMove);
  const report = await judge(run, iteration, { maker, verification, review, systemFindings });
  return { report, maker, systemFindings, review };
}

/** A new iteration of the loop's state with no maker of its own (a change replayed onto a moved base). */
export function beginIteration(run: LoopRun, checkpointCommit: string): IterationState {
  const { state } = run;
  state.sequence += 1;
  state.iterations.push({
    sequence: state.sequence,
    roundIteration: state.roundIteration,
    contractVersion: state.contractVersion,
    checkpointCommit,
    verdict: null,
    trigger: null,
  });
  return state.iterations[state.iterations.length - 1]!;
}

/**
 * The maker's activity; `verifyAfter`: the verification of its checkpoint too, and its review, under moves
 * numbered now (`asked`, null otherwise).
 */
async function runMaker(
  run: LoopRun,
  verifyAfter: boolean,
): Promise<{ maker: MakerResult; asked: VerifyAfterMaker | null }> {
  const { state, request } = run;
  const progress = run.enterPhase('MAKER');
  deprecatePatch(INSPECT_IN_MAKER_ACTIVITY);
  // After the move into MAKER: moves are numbered in the order they happen.
  const asked: VerifyAfterMaker | null = verifyAfter
    ? {
        progress: run.progressRecord('RUNNING', 'VERIFY'),
        review: reviewRequest(run),
        budget: request.budget,
        usageBefore: run.usage,
      }
    : null;
  const seconds = request.maker.timeoutSeconds + 120 + (asked ? verificationTimeoutSeconds(run, true) : 0);
  const maker = await work.runMaker.executeWithOptions(
    withSummary(run.label(asked ? 'maker, then verify' : 'maker'), { startToCloseTimeout: `${seconds}s` }),
    [
      {
        loopId: run.loopId,
        sequence: state.sequence,
        roundIteration: state.roundIteration,
        maxIterations: state.maxIterations,
        contractVersion: state.contractVersion,
        directives: run.directives,
        maker: request.maker,
        progress,
        inspect: { gates: run.gatePlan.gates },
        ...(asked && { verify: asked }),
      },
    ],
  );
  run.usage = addUsage(run.usage, maker.usage);
  // A changed manifest or lockfile: the maker's workspace is set up again before the next maker.
  run.setupDue = touchesSetupInputs(maker.changedFiles);
  return { maker, asked };
}

/** The verification the maker's activity made: the review's move is the one it was asked under. */
function verifiedByMaker(
  maker: MakerResult,
  verification: VerificationSummary,
  asked: VerifyAfterMaker,
): { verification: VerificationSummary; systemFindings: FindingSummary[]; reviewMove: ProgressInput } {
  return {
    verification,
    systemFindings: [...maker.inspected, ...verification.systemFindings],
    reviewMove: asked.review.progress,
  };
}

/**
 * The gates on a fresh checkout of the maker's checkpoint; `withReview`: the review too, once every gate
 * passed (`verification.review`), under the move into REVIEW returned as `reviewMove`. `moves`: the moves
 * into VERIFY and REVIEW the maker's activity was asked to verify under, when it did not.
 */
export async function verify(
  run: LoopRun,
  maker: MadeChange,
  { withReview, moves = null }: { withReview: boolean; moves?: VerifyAfterMaker | null } = { withReview: false },
): Promise<{ verification: VerificationSummary; systemFindings: FindingSummary[]; reviewMove?: ProgressInput }> {
  const { state, gatePlan } = run;
  let progress: ProgressInput;
  if (moves) {
    run.show('RUNNING', 'VERIFY');
    progress = moves.progress;
  } else progress = run.enterPhase('VERIFY');
  // After the move into VERIFY: moves are numbered in the order they happen.
  const reviewAfterGates = withReview ? (moves?.review ?? reviewRequest(run)) : null;
  const seconds = verificationTimeoutSeconds(run, reviewAfterGates !== null);
  const verification = await work.runVerification.executeWithOptions(
    withSummary(run.label(reviewAfterGates ? 'verify, then review' : 'verify'), { startToCloseTimeout: `${seconds}s` }),
    [
      {
        loopId: run.loopId,
        sequence: state.sequence,
        contractVersion: state.contractVersion,
        gates: gatePlan.gates,
        checkpointCommit: maker.checkpointCommit,
        progress,
        ...(reviewAfterGates && { review: reviewAfterGates }),
      },
    ],
  );
  // The maker's activity checked the checkpoint for tampering and scope; verification adds what the frozen tests showed.
  return {
    verification,
    systemFindings: [...maker.inspected, ...verification.systemFindings],
    ...(reviewAfterGates && { reviewMove: reviewAfterGates.progress }),
  };
}

/** What the verification's activity needs to review the change itself; `progress`: the move into REVIEW. */
function reviewRequest(run: LoopRun): ReviewAfterGates {
  return {
    reviewer: run.request.reviewer,
    profile: run.gatePlan.profile,
    priorSignatures: priorSignatures(run),
    // Numbered now, written by the activity only if it reviews: the query state moves on with the next phase.
    progress: run.progressRecord('RUNNING', 'REVIEW'),
  };
}

function priorSignatures(run: LoopRun): string[] {
  return [...new Set(run.previous.flatMap((p) => p.blockingSignatures))];
}

/**
 * The review: the verification's, or, when that one failed, the review activity's (under the same move
 * into REVIEW, `reviewMove`) — unless a gate failed, the checkout could not be set up or the budget is spent.
 */
async function reviewUnlessSettled(
  run: LoopRun,
  maker: MakerResult,
  verification: VerificationSummary,
  reviewMove?: ProgressInput,
): Promise<ReviewOutcome> {
  const { state, request } = run;
  const overBudget = budgetExhausted(request.budget, run.usage);
  const skipped = reviewSkipReason(verification);
  if (skipped) return { status: 'SKIPPED', reason: skipped };
  if (overBudget) return { status: 'SKIPPED', reason: overBudget };
  if (verification.review?.status === 'REVIEWED') {
    run.usage = addUsage(run.usage, verification.review.usage);
    return verification.review.outcome;
  }
  let progress: ProgressInput;
  if (reviewMove) {
    run.show('RUNNING', 'REVIEW');
    progress = reviewMove;
  } else progress = run.enterPhase('REVIEW');
  const reviewed = await reviewOrFailure(() =>
    work.runReview.executeWithOptions(
      withSummary(run.label('review'), { startToCloseTimeout: `${reviewTimeoutSeconds(request.reviewer)}s` }),
      [
        {
          loopId: run.loopId,
          sequence: state.sequence,
          contractVersion: state.contractVersion,
          reviewer: request.reviewer,
          profile: run.gatePlan.profile,
          priorSignatures: priorSignatures(run),
          checkpointCommit: maker.checkpointCommit,
          progress,
        },
      ],
    ),
  );
  run.usage = addUsage(run.usage, reviewed.usage);
  return reviewed.outcome;
}

/** The judge's verdict (a pure function), recorded with the iteration. */
export async function judge(
  run: LoopRun,
  iteration: IterationState,
  {
    maker,
    verification,
    review,
    systemFindings,
  }: { maker: MadeChange; verification: VerificationSummary; review: ReviewOutcome; systemFindings: FindingSummary[] },
): Promise<JudgeReport> {
  const { state, request, contract } = run;
  const progress = run.enterPhase('JUDGE');
  const report = computeVerdict({
    roundIteration: state.roundIteration,
    maxIterations: state.maxIterations,
    gates: verification.gates,
    acceptanceChecks: verification.acceptanceChecks,
    review,
    systemFindings,
    acceptanceCriteria: contract.acceptanceCriteria.map((ac) => ({
      id: ac.id,
      statement: ac.statement,
      proof: describeProof(ac.verification),
    })),
    maker: {
      noChange: maker.noChange,
      diffHash: maker.diffHash,
      cumulativeDiffEmpty: maker.cumulativeDiffEmpty,
      agentReport: maker.agentReport,
    },
    budgetExhausted: budgetExhausted(request.budget, run.usage),
    previous: run.previous,
    environmentProblem: verification.environmentProblem ?? null,
  });
  run.previous = [...run.previous, report.record];
  state.lastVerdict = report.verdict;
  iteration.verdict = report.verdict;
  iteration.trigger = report.trigger;
  await run
    .recorder()
    .recordVerdict.executeWithOptions(withSummary(run.label(`verdict ${report.verdict}`)), [
      { loopId: run.loopId, sequence: state.sequence, report, warnings: run.gatePlan.warnings ?? [], progress },
    ]);
  return report;
}

/** A review that cannot be had (provider down, auth refused) escalates; it never crashes the loop. */
async function reviewOrFailure(
  review: () => Promise<{ outcome: ReviewOutcome; usage: Usage }>,
): Promise<{ outcome: ReviewOutcome; usage: Usage }> {
  try {
    return await review();
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    return { outcome: { status: 'FAILED', reason: cause }, usage: NO_USAGE };
  }
}

/** The verification's time limit: its commands' and, with `withReview`, the review's. */
function verificationTimeoutSeconds(run: LoopRun, withReview: boolean): number {
  const { gatePlan, contract, request } = run;
  return (
    verificationSeconds([...gatePlan.gates, ...(gatePlan.setup?.commands ?? [])], contract.acceptanceCriteria) +
    (withReview ? reviewTimeoutSeconds(request.reviewer) : 0)
  );
}

function verificationSeconds(
  gates: { timeoutSeconds: number }[],
  criteria: { verification: { type: string; timeoutSeconds?: number } }[],
): number {
  const commandSeconds = criteria.reduce((sum, ac) => sum + (ac.verification.timeoutSeconds ?? 0), 0);
  return gates.reduce((sum, g) => sum + g.timeoutSeconds, 0) + commandSeconds + 120;
}
