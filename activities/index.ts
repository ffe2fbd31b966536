import { backtrack, type BacktrackInput } from './backtrack';
import type { PresetBackend } from '../domain/maker-presets';
import { checkAgent } from './makers/agent-check';
import { freezeContract, type FreezeContractInput } from './contract';
import {
  authorizeDecision,
  recordRefusedDecision,
  type AuthorizeDecisionInput,
  type RefusedDecisionInput,
} from './decision-authorization';
import type { ActivityDeps } from './deps';
import type { DeliverInput } from './delivery';
import { whileHeartbeating } from './heartbeat';
import { makerThenVerify, type MakerThenVerifyInput } from './maker-then-verify';
import { deliverAndEnd, prepareThenDeliver, type PrepareThenDeliverInput } from './prepare-then-deliver';
import { inPhase, recordProgress, type InPhase, type ProgressInput } from './progress';
import {
  recordContractApproval,
  recordDecision,
  recordEscalation,
  recordVerdict,
  type EscalationInput,
} from './records';
import { runReview, type ReviewInput } from './review/run-review';
import { loopLogicAttempts, withRetryClasses } from './retry-classes';
import { clearWaiting, markWaiting } from '../store/loop-waiting';
import { boundToLoopRun, claimContinuedRun } from './run-binding';
import { withSanitisedFailures } from './sanitised-failures';
import { runWorkspaceSetup, type WorkspaceSetupInput } from './setup/workspace-setup';
import { resolveAcceptanceTests, type AcceptanceTestsInput } from './verification/acceptance-tests';
import { verifyThenReview, type VerifyThenReviewInput } from './verification/verify-then-review';
import { prepareWorkspace, type PrepareWorkspaceInput } from './workspace';

/** Every activity the worker runs: the loop's and the presets' smoke tests. */
export function createActivities(deps: ActivityDeps) {
  return { ...createLoopActivities(deps), ...createAgentCheckActivities(deps) };
}

/**
 * Every activity the loop workflow calls, bound to the service's dependencies; failures leave classed
 * (retry-classes.ts) and sanitised. Each acts only for the loop's own workflow run (run-binding.ts),
 * which a continued run claims first. The git steps heartbeat while they run: the workflow gives them a
 * 20 s heartbeat timeout.
 */
function createLoopActivities(deps: ActivityDeps) {
  return withSanitisedFailures(
    withRetryClasses(
      loopLogicAttempts,
      {
        claimContinuedRun: (input: { loopId: string; continuedFrom: string | null }) =>
          claimContinuedRun(deps.prisma, input),
        ...loopActivities(deps),
      },
      {
        waiting: (loopId, reason) => markWaiting(deps.prisma, loopId, reason),
        over: (loopId) => clearWaiting(deps.prisma, loopId),
      },
    ),
  );
}

/** A preset's smoke test (workflows/agent-checks.ts): no loop's, so not bound to a loop run. */
function createAgentCheckActivities(deps: ActivityDeps) {
  return withSanitisedFailures({
    checkAgent: (input: { backend: PresetBackend }) => checkAgent(deps, input),
  });
}

function loopActivities(deps: ActivityDeps) {
  return boundToLoopRun(deps.prisma, {
    prepareWorkspace: (input: InPhase<PrepareWorkspaceInput>) =>
      whileHeartbeating(
        inPhase(deps, input, () => prepareWorkspace(deps, input)),
        'prepare workspace',
      ),
    // The first version is frozen on entering CONTRACT; later ones (after a decision) outside any phase entry.
    freezeContract: (input: FreezeContractInput & { progress?: ProgressInput }) =>
      input.progress
        ? inPhase(deps, { ...input, progress: input.progress }, () => freezeContract(deps, input))
        : freezeContract(deps, input),
    recordProgress: (input: ProgressInput) => recordProgress(deps, input),
    // The heavy phases heartbeat throughout, not only while a command runs: committing, checking out or
    // diffing a sweeping change (100,000 files) takes longer than the 20 s heartbeat timeout.
    runWorkspaceSetup: (input: WorkspaceSetupInput) => whileHeartbeating(runWorkspaceSetup(deps, input), 'set-up'),
    runMaker: (input: InPhase<MakerThenVerifyInput>) =>
      whileHeartbeating(
        inPhase(deps, input, () => makerThenVerify(deps, input)),
        'maker',
      ),
    resolveAcceptanceTests: (input: AcceptanceTestsInput) =>
      whileHeartbeating(resolveAcceptanceTests(deps, input), 'acceptance tests at base'),
    runVerification: (input: InPhase<VerifyThenReviewInput>) =>
      whileHeartbeating(
        inPhase(deps, input, () => verifyThenReview(deps, input)),
        'verify',
      ),
    runReview: (input: InPhase<ReviewInput>) =>
      whileHeartbeating(
        inPhase(deps, input, () => runReview(deps, input)),
        'review',
      ),
    backtrack: (input: BacktrackInput) => whileHeartbeating(backtrack(deps, input), 'backtrack'),
    prepareDelivery: (input: PrepareThenDeliverInput) =>
      whileHeartbeating(prepareThenDeliver(deps, input), 'prepare delivery'),
    recordVerdict: (input: InPhase<Parameters<typeof recordVerdict>[1]>) =>
      inPhase(deps, input, () => recordVerdict(deps, input)),
    recordEscalation: (input: EscalationInput) => recordEscalation(deps, input),
    recordContractApproval: (input: Parameters<typeof recordContractApproval>[1]) =>
      recordContractApproval(deps, input),
    authorizeDecision: (input: AuthorizeDecisionInput) => authorizeDecision(deps, input),
    recordDecision: (input: Parameters<typeof recordDecision>[1]) => recordDecision(deps, input),
    recordRefusedDecision: (input: RefusedDecisionInput) => recordRefusedDecision(deps, input),
    deliver: (input: DeliverInput & { ended: ProgressInput }) =>
      whileHeartbeating(deliverAndEnd(deps, input), 'deliver'),
  });
}

export type LoopActivities = ReturnType<typeof createLoopActivities>;
export type AgentCheckActivities = ReturnType<typeof createAgentCheckActivities>;
