import type { LoopRequest } from '../domain/loop-request';
import { policyViolation, withPolicyDefaults } from '../domain/operator-policy';
import type { ApiPolicy } from './deps';
import { ApiError } from './errors';

/** The request within the operator's ceilings (domain/operator-policy.ts), or a 400 naming the field and the ceiling. */
export function applyOperatorPolicy(policy: ApiPolicy, request: LoopRequest): LoopRequest {
  const operator = policy.operator ?? {};
  const violation = policyViolation(operator, request);
  if (violation) throw new ApiError(400, `${violation.field}: ${violation.message} (GET /v1/policy)`);
  return withPolicyDefaults(operator, request);
}
