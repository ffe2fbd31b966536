import type { LoopRequest } from '../domain/loop-request';
import type { ApiPolicy } from './deps';
import type { Principal } from './auth/api-keys';
import { ApiError } from './errors';

// The operator's decision rules the API enforces (config/service-config.ts `decisions`): the workflow cannot read
// configuration, so these gates sit where requests come in.

/** A deadline that approves by default would let a submitter approve their own work by waiting. */
export function checkDeadlineDefault(policy: ApiPolicy, request: LoopRequest): void {
  if (request.escalation.defaultDecision === 'approve' && !policy.decisions.allowDeadlineApprove) {
    throw new ApiError(
      400,
      'body.escalation.defaultDecision: the operator does not allow a decision deadline to approve (ALLOW_DEADLINE_APPROVE is off); use "reject"',
    );
  }
}

/** Separation of duties: the key that submitted a loop may not decide its escalations. */
export function checkSeparationOfDuties(
  policy: ApiPolicy,
  loop: { id: string; submittedByKeyId: string | null },
  principal: Principal,
): void {
  if (policy.decisions.separationOfDuties && loop.submittedByKeyId === principal.keyId) {
    throw new ApiError(
      403,
      `separation of duties: API key "${principal.name}" submitted loop ${loop.id}, so another approver must decide it`,
    );
  }
}
