import { patched } from '@temporalio/workflow';
import { work } from './activities';
import { escalate } from './decisions';
import { endRejected, resumeWith, type LoopOutcome } from './endings';
import { withSummary, type LoopRun } from './loop-run';
import { RESOLVE_TEST_NAMES_AT_BASE } from './patches';

// Before the first maker: the contract's test names resolved against the base commit's tests
// (activities/verification/acceptance-tests.ts). A name several base tests answer to goes to a person as
// a contract decision with the candidates, so no maker is paid for before the contract says which test
// proves it: amend (name one; it is resolved again), approve (start anyway: that criterion cannot be
// proven), or reject.

/** Returns the loop's outcome when a person rejected the contract, else null. */
export async function resolveTestNames(run: LoopRun): Promise<LoopOutcome | null> {
  for (;;) {
    const testsGate = run.gatePlan.gates.find((g) => g.gate === 'tests');
    const namesTests = run.contract.acceptanceCriteria.some((ac) => ac.verification.type === 'test');
    if (!testsGate || !namesTests || !patched(RESOLVE_TEST_NAMES_AT_BASE)) return null;
    const { ambiguous } = await work.resolveAcceptanceTests.executeWithOptions(
      withSummary('acceptance tests at base', { startToCloseTimeout: `${testsGate.timeoutSeconds + 120}s` }),
      [{ loopId: run.loopId, contractVersion: run.state.contractVersion, gates: run.gatePlan.gates }],
    );
    if (!ambiguous.length) return null;
    const { effect } = await escalate(run, {
      trigger: 'CONTRACT_APPROVAL',
      record: (escalationSequence) =>
        run.recorder().recordContractApproval.executeWithOptions(withSummary('ambiguous test names'), [
          {
            loopId: run.loopId,
            escalationSequence,
            contractVersion: run.state.contractVersion,
            ambiguousTests: ambiguous,
          },
        ]),
    });
    if (effect.action === 'END_REJECTED') return endRejected(run);
    if (effect.action !== 'RESUME') return null;
    await resumeWith(run, effect);
  }
}
