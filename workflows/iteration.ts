import { deprecatePatch, isCancellation } from '@temporalio/workflow';
import { addUsage, budgetExhausted, NO_USAGE, type Usage } from '../domain/budget';
import { computeVerdict, type JudgeReport, type ReviewOutcome } from '../domain/judge';
import type { FindingSummary } from '../domain/ledger';
import { describeProof } from '../domain/proof';
import { reviewTimeoutSeconds } from '../domain/review-limits';
import { touchesSetupInputs } from '../domain/setup';
import type { LoopActivities } from '../activities';
import { work } from './activities';
import { withSummary, type LoopRun } from './loop-run';
import { INSPECT_IN_MAKER_ACTIVITY } from './patches';

// One iteration: the maker changes the workspace, the gates verify it, the reviewer reviews it, the judge decides.

type MakerResult = Awaited<ReturnType<LoopActivities['runMaker']>>;
/** What verification and the judge read of a maker's result (a change replayed onto a moved base has no maker). */
export type MadeChange = Pick<
  MakerResult,
  'checkpointCommit' | 'inspected' | 'noChange' | 'diffHash' | 'cumulativeDiffEmpty' | 'agentReport'
>;
type VerificationSummary = Awaited<ReturnType<LoopActivities['runVerification']>>;
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

  const maker = await runMaker(run);
  iteration.checkpointCommit = maker.checkpointCommit;
  const { verification, systemFindings } = await verify(run, maker);
  const review = await reviewUnlessSettled(run, maker, verification);
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

async function runMaker(run: LoopRun): Promise<MakerResult> {
  const { state, request } = run;
  const progress = run.enterPhase('MAKER');
  deprecatePatch(INSPECT_IN_MAKER_ACTIVITY);
  const maker = await work.runMaker.executeWithOptions(
    withSummary(run.label('maker'), { startToCloseTimeout: `${request.maker.timeoutSeconds + 120}s` }),
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
      },
    ],
  );
  run.usage = addUsage(run.usage, maker.usage);
  // A changed manifest or lockfile: the maker's workspace is set up again before the next maker.
  run.setupDue = touchesSetupInputs(maker.changedFiles);
  return maker;
}

export async function verify(
  run: LoopRun,
  maker: MadeChange,
): Promise<{ verification: VerificationSummary; systemFindings: FindingSummary[] }> {
  const { state, gatePlan, contract } = run;
  const progress = run.enterPhase('VERIFY');
  const timeout = verificationTimeout(
    [...gatePlan.gates, ...(gatePlan.setup?.commands ?? [])],
    contract.acceptanceCriteria,
  );
  const verification = await work.runVerification.executeWithOptions(
    withSummary(run.label('verify'), { startToCloseTimeout: timeout }),
    [
      {
        loopId: run.loopId,
        sequence: state.sequence,
        contractVersion: state.contractVersion,
        gates: gatePlan.gates,
        checkpointCommit: maker.checkpointCommit,
        progress,
      },
    ],
  );
  // The maker's activity checked the checkpoint for tampering and scope; verification adds what the frozen tests showed.
  return { verification, systemFindings: [...maker.inspected, ...verification.systemFindings] };
}

/** The review, unless a gate failed, the checkout could not be set up or the budget is spent. */
async function reviewUnlessSettled(
  run: LoopRun,
  maker: MakerResult,
  verification: VerificationSummary,
): Promise<ReviewOutcome> {
  const { state, request } = run;
  const overBudget = budgetExhausted(request.budget, run.usage);
  if (verification.gates.some((g) => g.status === 'FAILED'))
    return { status: 'SKIPPED', reason: 'a configured gate failed' };
  if (verification.environmentProblem)
    return { status: 'SKIPPED', reason: 'the verification checkout could not be set up' };
  if (overBudget) return { status: 'SKIPPED', reason: overBudget };
  const progress = run.enterPhase('REVIEW');
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
          priorSignatures: [...new Set(run.previous.flatMap((p) => p.blockingSignatures))],
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

function verificationTimeout(
  gates: { timeoutSeconds: number }[],
  criteria: { verification: { type: string; timeoutSeconds?: number } }[],
): string {
  const commandSeconds = criteria.reduce((sum, ac) => sum + (ac.verification.timeoutSeconds ?? 0), 0);
  return `${gates.reduce((sum, g) => sum + g.timeoutSeconds, 0) + commandSeconds + 120}s`;
}
