import { backtrack, type BacktrackInput } from './backtrack';
import { freezeContract, type FreezeContractInput } from './contract';
import { authorizeDecision, recordRefusedDecision, type AuthorizeDecisionInput, type RefusedDecisionInput } from './decision-authorization';
import type { ActivityDeps } from './deps';
import { deliver, type DeliverInput } from './delivery';
import { whileHeartbeating } from './heartbeat';
import { inspectChanges, type InspectChangesInput } from './inspect-changes';
import { runMaker, type MakerInput } from './maker';
import { recordProgress, type ProgressInput } from './progress';
import { recordContractApproval, recordDecision, recordEscalation, recordVerdict, type EscalationInput } from './records';
import { runReview, type ReviewInput } from './review/run-review';
import { withSanitisedFailures } from './sanitised-failures';
import { runWorkspaceSetup, type WorkspaceSetupInput } from './setup/workspace-setup';
import { runVerification, type VerificationInput } from './verification/run-verification';
import { prepareWorkspace, type PrepareWorkspaceInput } from './workspace';

/**
 * Every activity the loop workflow calls, bound to the service's dependencies; failures leave sanitised.
 * The git steps heartbeat while they run: the workflow gives them a 20 s heartbeat timeout.
 */
export function createActivities(deps: ActivityDeps) {
  return withSanitisedFailures({
    prepareWorkspace: (input: PrepareWorkspaceInput) => whileHeartbeating(prepareWorkspace(deps, input), 'prepare workspace'),
    freezeContract: (input: FreezeContractInput) => freezeContract(deps, input),
    recordProgress: (input: ProgressInput) => recordProgress(deps, input),
    runWorkspaceSetup: (input: WorkspaceSetupInput) => runWorkspaceSetup(deps, input),
    runMaker: (input: InPhase<MakerInput>) => inPhase(deps, input, () => runMaker(deps, input)),
    inspectChanges: (input: InPhase<InspectChangesInput>) => whileHeartbeating(inPhase(deps, input, () => inspectChanges(deps, input)), 'inspect changes'),
    runVerification: (input: VerificationInput) => runVerification(deps, input),
    runReview: (input: InPhase<ReviewInput>) => inPhase(deps, input, () => runReview(deps, input)),
    backtrack: (input: BacktrackInput) => whileHeartbeating(backtrack(deps, input), 'backtrack'),
    recordVerdict: (input: InPhase<Parameters<typeof recordVerdict>[1]>) => inPhase(deps, input, () => recordVerdict(deps, input)),
    recordEscalation: (input: EscalationInput) => recordEscalation(deps, input),
    recordContractApproval: (input: Parameters<typeof recordContractApproval>[1]) => recordContractApproval(deps, input),
    authorizeDecision: (input: AuthorizeDecisionInput) => authorizeDecision(deps, input),
    recordDecision: (input: Parameters<typeof recordDecision>[1]) => recordDecision(deps, input),
    recordRefusedDecision: (input: RefusedDecisionInput) => recordRefusedDecision(deps, input),
    deliver: (input: DeliverInput) => whileHeartbeating(deliver(deps, input), 'deliver'),
  });
}

export type LoopActivities = ReturnType<typeof createActivities>;

/** The input of a phase's first activity, which records the loop's entry into the phase (absent in older loops' calls). */
type InPhase<T> = T & { progress?: ProgressInput };

/** Records the entry into the phase, then does the phase's work: one round trip from the workflow, not two. */
async function inPhase<T>(deps: ActivityDeps, input: InPhase<unknown>, work: () => Promise<T>): Promise<T> {
  if (input.progress) await recordProgress(deps, input.progress);
  return work();
}
