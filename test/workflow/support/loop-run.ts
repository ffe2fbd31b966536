import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Decision } from '../../../domain/decision';
import { loopWorkflowId, type LoopInput } from '../../../domain/loop-request';
import type { LoopState } from '../../../domain/loop-state';
import type { engineeringLoop } from '../../../workflows';
import { decideUpdate, loopStateQuery, type DecisionReceipt } from '../../../workflows/messages';
import { LoopPhaseKey, LoopRepoKey, LoopStatusKey } from '../../../workflows/search-attributes';
import type { ScriptedLoop } from './scripted-activities';

// One loop on the test server: started as the API starts it, run by the file's worker with its scripted
// activities, driven by the test until `drive` settles; terminated then if it still runs.

export interface RunningLoop {
  input: LoopInput;
  handle: WorkflowHandleWithFirstExecutionRunId<typeof engineeringLoop>;
  activities: ScriptedLoop;
  /** The `loopState` query on the loop's current run. */
  state(): Promise<LoopState>;
  /**
   * Resolves once the loop's `nth` escalation waits for a decision: its AWAITING_DECISION move was recorded
   * and the workflow task that made it completed (a query is answered only then), search attributes included.
   */
  awaitingDecision(nth?: number): Promise<void>;
  /** A decision through the update the API sends. */
  decide(decision: Decision): Promise<DecisionReceipt>;
  /** The loop's current run: the input it started with and the run it continued from (null for the first). */
  currentRun(): Promise<{ runId: string; input: LoopInput; continuedFrom: string | null }>;
}

export interface LoopWorker {
  taskQueue: string;
  activities: ScriptedLoop;
  /** The worker's run: a worker that stops fails the loop's test instead of leaving it waiting. */
  running: Promise<void>;
}

export async function runLoop<T>(
  env: TestWorkflowEnvironment,
  { taskQueue, activities, running }: LoopWorker,
  input: LoopInput,
  drive: (loop: RunningLoop) => Promise<T>,
): Promise<T> {
  const handle = await env.client.workflow.start<typeof engineeringLoop>('engineeringLoop', {
    taskQueue,
    workflowId: loopWorkflowId(input.loopId),
    args: [input],
    typedSearchAttributes: [
      { key: LoopRepoKey, value: input.request.repository.url },
      { key: LoopStatusKey, value: 'QUEUED' },
      { key: LoopPhaseKey, value: 'QUEUED' },
    ],
  });
  const current = () => env.client.workflow.getHandle<typeof engineeringLoop>(handle.workflowId);
  const loop: RunningLoop = {
    input,
    handle,
    activities,
    state: () => current().query(loopStateQuery),
    awaitingDecision: async (nth = 1) => {
      await activities.called('recordProgress', (p) => p.status === 'AWAITING_DECISION', nth);
      await loop.state();
    },
    decide: (decision) => current().executeUpdate(decideUpdate, { args: [decision] }),
    currentRun: async () => {
      const { runId } = await current().describe();
      const started = (await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory()).events?.[0]
        ?.workflowExecutionStartedEventAttributes;
      const payload = started?.input?.payloads?.[0];
      if (!payload) throw new Error(`run ${runId} has no input`);
      return {
        runId,
        input: defaultPayloadConverter.fromPayload<LoopInput>(payload),
        continuedFrom: started.continuedExecutionRunId || null,
      };
    },
  };
  const stopped = running.then(() => Promise.reject(new Error('the worker stopped while the loop ran')));
  try {
    return await Promise.race([drive(loop), stopped]);
  } finally {
    // A loop left waiting must not wake up (a deadline) while a later test skips time.
    if ((await current().describe()).status.name === 'RUNNING') await current().terminate('the test is over');
  }
}
