import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Decision } from '../domain/decision';
import { decideUpdate, INVALID_DECISION, NOT_AWAITING_DECISION, type DecisionReceipt } from '../workflows/messages';
import type { RouteDeps } from './deps';
import { ApiError, conflict } from './errors';
import { callTemporal } from './temporal-calls';

/** An update returns once the workflow accepted it, which takes a worker: longer than a plain call. */
const DECISION_DEADLINE_MS = 30_000;

/**
 * Delivers a decision as a Temporal update, so the answer is the workflow's own: accepted, or rejected
 * by its validator because the loop is not awaiting one (409) or the decision does not fit (422).
 */
export async function deliverDecision(
  deps: Pick<RouteDeps, 'temporal'>,
  workflowId: string,
  decision: Decision,
): Promise<DecisionReceipt> {
  try {
    const handle = deps.temporal.workflow.getHandle(workflowId);
    const notDelivered = 'the decision was not delivered; send it again once Temporal is back';
    return await callTemporal(
      deps.temporal,
      notDelivered,
      () => handle.executeUpdate(decideUpdate, { args: [decision] }),
      DECISION_DEADLINE_MS,
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw conflict(
        `Temporal has no running workflow ${workflowId} (it ended or never started); there is nothing to decide`,
      );
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
      if (err.cause.type === NOT_AWAITING_DECISION) throw conflict(err.cause.message);
      if (err.cause.type === INVALID_DECISION) throw new ApiError(422, err.cause.message);
    }
    throw err;
  }
}
