import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { resolveTemporalCli } from '../../service/temporal-dev-server';
import { blockerLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { sharedTestDir } from '../support/sandbox';

// The escape suite, Temporal part (docs/threat-model.md, "What someone who reaches Temporal cannot do"):
// an attacker with Temporal's frontend terminates a loop that waits for a human and starts a run of its
// own under the loop's workflow id, with the stored input and a reviewer that passes anything; or resets
// the loop's run. Neither run may act: no command runs, nothing is delivered, the escalation still waits
// for a person, and the API shows the loop as ended from outside.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

async function escalatedLoop() {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const request = loopRequest(repo, maker.argv, { maxIterations: 1 });
  h.llm.enqueue({ content: blockerLedger() });
  const submitted = await h.request('POST', '/v1/loops', request);
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('AWAITING_DECISION');
  // The run the API started is the one bound to the loop.
  const row = await h.db.prisma.loop.findUniqueOrThrow({ where: { id: loop.id } });
  expect(row.currentRunId).toBe((await h.temporal.workflow.getHandle(loop.workflowId).describe()).runId);
  return { loop, request, repo };
}

/** The loop as a person sees it after the attack: ended outside, its escalation open and undecided. */
async function expectShownEndedOutside(loopId: string, how: string) {
  const loop = (await h.request('GET', `/v1/loops/${loopId}`)).body;
  expect(loop.status).toBe('TERMINATED');
  expect(loop.failureReason).toMatch(new RegExp(`^the loop's workflow run \\S+ ended ${how} outside the service at `));
  expect(loop.escalations.map((e: any) => [e.status, e.decision])).toEqual([['OPEN', null]]);
  expect(loop.delivery).toEqual({ pushedBranch: null, pullRequestUrl: null, deliveryError: null, contextImpact: null });
  const decided = await h.request('POST', `/v1/loops/${loopId}/decisions`, {
    kind: 'approve',
    escalationId: loop.escalations[0].id,
  });
  expect(decided.status).toBe(409);
  return loop;
}

test('a run started under an escalated loop’s id after terminating it does nothing, and the loop shows it was terminated', async () => {
  const { loop, request, repo } = await escalatedLoop();
  const handle = h.temporal.workflow.getHandle(loop.workflowId);
  await handle.terminate('attacker');

  // The stored input, with a maker that leaves a mark and a reviewer of the attacker's choosing.
  const marker = path.join(sharedTestDir('forged-run-'), 'maker-ran');
  const forgedMaker = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`];
  const forged = await h.temporal.workflow.start('engineeringLoop', {
    taskQueue: h.taskQueue,
    workflowId: loop.workflowId,
    args: [{ loopId: loop.id, request: { ...request, maker: { ...request.maker, argv: forgedMaker } } }],
  });
  const failure = await forged.result().then(
    () => null,
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause).toMatchObject({
    type: 'FORGED_RUN',
    message: expect.stringContaining(`is not the loop's own run`),
  });

  expect(fs.existsSync(marker)).toBe(false);
  // Nothing was pushed to the repository: not the loop's branch, nor any other.
  const branches = execFileSync('git', ['branch', '--format=%(refname:short)'], { cwd: repo, encoding: 'utf8' });
  expect(branches.trim().split('\n')).toEqual(['main']);
  await expectShownEndedOutside(loop.id, 'TERMINATED');
});

test('a run reset from outside cannot act either, and the loop shows its run was ended', async () => {
  const { loop } = await escalatedLoop();
  const cli = resolveTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } });
  execFileSync(
    cli,
    [
      'workflow',
      'reset',
      '--workflow-id',
      loop.workflowId,
      '--type',
      'FirstWorkflowTask',
      '--reason',
      'attacker',
      '--address',
      process.env.TEST_TEMPORAL_ADDRESS!,
      '--namespace',
      'default',
    ],
    { encoding: 'utf8' },
  );
  // The reset made a new run (the latest under the id) and terminated the loop's own.
  const latest = h.temporal.workflow.getHandle(loop.workflowId);
  const bound = (await h.db.prisma.loop.findUniqueOrThrow({ where: { id: loop.id } })).currentRunId;
  expect((await latest.describe()).runId).not.toBe(bound);
  const failure = await latest.result().then(
    () => null,
    (err: unknown) => err,
  );
  expect((failure as WorkflowFailedError).cause).toMatchObject({ type: 'FORGED_RUN' });
  await expectShownEndedOutside(loop.id, 'TERMINATED');
});
