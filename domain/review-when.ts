import type { GateStatus } from './gates';

// When a change is reviewed at all. The verification's activity asks it before reviewing in place, and
// the workflow before asking for a review of its own (workflows/iteration.ts): one rule for both.

/**
 * Why the reviewer does not read this change, or null when it does: a failed gate or a checkout that
 * could not be set up already settles the iteration, and the reviewer's tokens would buy nothing.
 */
export function reviewSkipReason(verification: {
  gates: Array<{ status: GateStatus }>;
  environmentProblem?: string | null;
}): string | null {
  if (verification.gates.some((g) => g.status === 'FAILED')) return 'a configured gate failed';
  if (verification.environmentProblem) return 'the verification checkout could not be set up';
  return null;
}
