import { environmentReport } from '../domain/judge';
import { MAX_SETUP_TIMEOUT_SECONDS } from '../domain/setup';
import { work } from './activities';
import { escalate } from './decisions';
import { withHumanGuidance } from './details';
import { endRejected, resumeWith, type LoopOutcome } from './endings';
import { withSummary, type LoopRun } from './loop-run';

/**
 * The SETUP phase: installs dependencies in the maker's workspace. A failure goes to a human as an
 * ENVIRONMENT escalation (never to the maker); retry or amend runs the set-up again, approve goes on
 * without it, reject ends the loop. Returns the loop's outcome when it ended, else null.
 */
export async function setUp(run: LoopRun): Promise<LoopOutcome | null> {
  const { loopId, state } = run;
  for (;;) {
    await run.transition('RUNNING', 'SETUP');
    const setup = await work.runWorkspaceSetup.executeWithOptions(
      withSummary(state.sequence ? `set-up after #${state.sequence}` : 'set-up', {
        startToCloseTimeout: `${MAX_SETUP_TIMEOUT_SECONDS * 2}s`,
      }),
      [{ loopId, key: `${state.sequence}.${run.escalations}` }],
    );
    if (setup.problem === null) return null;
    const report = environmentReport(setup.problem, state.roundIteration, state.maxIterations);
    const { effect } = await escalate(run, {
      trigger: 'ENVIRONMENT',
      record: (escalationSequence) =>
        run
          .recorder()
          .recordEscalation.executeWithOptions(withSummary(`escalation ${escalationSequence}: ENVIRONMENT (set-up)`), [
            { loopId, escalationSequence, sequence: state.sequence, report },
          ]),
    });
    if (effect.action === 'END_REJECTED') return endRejected(run);
    if (effect.action === 'DELIVER_OVERRIDE') return null;
    await resumeWith(run, effect);
    if (effect.guidance) run.directives = withHumanGuidance(run.directives, effect.guidance);
  }
}
