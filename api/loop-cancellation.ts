import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { conflict } from './errors';
import { callTemporal } from './temporal-calls';

/**
 * Asks the loop's workflow to cancel. A loop Temporal has no workflow for — never started (still QUEUED),
 * or gone from Temporal — gets 409 saying so.
 */
export async function cancelLoop(
  temporal: Client,
  loop: { id: string; workflowId: string; status: string },
): Promise<void> {
  try {
    await callTemporal(temporal, 'the loop was not cancelled; send the cancellation again', () =>
      temporal.workflow.getHandle(loop.workflowId).cancel(),
    );
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const why =
      loop.status === 'QUEUED' ? 'it was never started' : `it is no longer there, though the loop is ${loop.status}`;
    throw conflict(`loop ${loop.id} has no workflow in Temporal (${why}); there is nothing to cancel`);
  }
}
