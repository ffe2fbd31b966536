import { gitWork } from './activities';
import { escalate } from './decisions';
import { endRejected, resumeWith, type LoopOutcome } from './endings';
import { withSummary, type LoopRun } from './loop-run';
import { START_PROGRESS_IN_ACTIVITIES } from './patches';

// A new loop's first steps: the workspace and its gate plan, the frozen contract, and — when asked for — a
// person's approval of that contract before any maker runs.

/** Returns the loop's outcome when a person rejected the contract, else null. */
export async function prepare(run: LoopRun): Promise<LoopOutcome | null> {
  const { loopId, request } = run;
  ({ gatePlan: run.gatePlan } = await gitWork.prepareWorkspace.executeWithOptions(
    withSummary('prepare workspace', { startToCloseTimeout: '10m' }),
    [
      {
        loopId,
        repository: request.repository,
        contractGates: request.gates,
        progress: run.enterPhase('PREPARING', START_PROGRESS_IN_ACTIVITIES),
      },
    ],
  ));
  await run.freeze(1, 'submitted', run.enterPhase('CONTRACT', START_PROGRESS_IN_ACTIVITIES));
  if (!request.requireContractApproval) return null;

  const { effect } = await escalate(run, {
    trigger: 'CONTRACT_APPROVAL',
    record: (escalationSequence) =>
      run
        .recorder()
        .recordContractApproval.executeWithOptions(withSummary('contract approval requested'), [
          { loopId, escalationSequence, contractVersion: run.state.contractVersion },
        ]),
  });
  if (effect.action === 'END_REJECTED') return endRejected(run);
  if (effect.action === 'RESUME') await resumeWith(run, effect);
  return null;
}
