import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Decision } from '../domain/decision';
import { decideUpdate, INVALID_DECISION, NOT_AWAITING_DECISION, type DecisionReceipt } from '../workflows/messages';
import type { AppDeps } from './app';
import { ApiError, conflict } from './errors';

/**
 * Delivers a decision as a Temporal update, so the answer is the workflow's own: accepted, or rejected
 * by its validator because the loop is not awaiting one (409) or the decision does not fit (422).
 */
export async function deliverDecision(deps: Pick<AppDeps, 'temporal'>, workflowId: string, decision: Decision): Promise<DecisionReceipt> {
  try {
    return await deps.temporal.workflow.getHandle(workflowId).executeUpdate(decideUpdate, { args: [decision] });
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw conflict(`the loop's workflow has ended; there is nothing to decide`);
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
      if (err.cause.type === NOT_AWAITING_DECISION) throw conflict(err.cause.message);
      if (err.cause.type === INVALID_DECISION) throw new ApiError(422, err.cause.message);
    }
    throw err;
  }
}
