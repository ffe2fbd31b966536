import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { INVALID_PAUSE, pauseUpdate, resumeUpdate, type PauseReceipt } from '../workflows/messages';
import type { RouteDeps } from './deps';
import { ApiError, conflict } from './errors';
import { callTemporal } from './temporal-calls';

/** An update returns once the workflow accepted it, which takes a worker: longer than a plain call. */
const PAUSE_DEADLINE_MS = 30_000;

/**
 * Pauses or resumes the loop's workflow with an update, so the answer is the workflow's own: whether a
 * pause stands and whether the loop already holds (it finishes its current step first).
 */
export async function sendPause(
  deps: Pick<RouteDeps, 'temporal'>,
  workflowId: string,
  change: { pause: true; actor: string; reason: string | null } | { pause: false; actor: string },
): Promise<PauseReceipt> {
  try {
    const handle = deps.temporal.workflow.getHandle(workflowId);
    const verb = change.pause ? 'pause' : 'resume';
    return await callTemporal(
      deps.temporal,
      `the ${verb} was not delivered; send it again once Temporal is back`,
      () =>
        change.pause
          ? handle.executeUpdate(pauseUpdate, { args: [{ actor: change.actor, reason: change.reason }] })
          : handle.executeUpdate(resumeUpdate, { args: [{ actor: change.actor }] }),
      PAUSE_DEADLINE_MS,
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw conflict(`Temporal has no running workflow ${workflowId} (it ended or never started)`);
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
      if (err.cause.type === INVALID_PAUSE) throw new ApiError(422, err.cause.message);
    }
    throw err;
  }
}
