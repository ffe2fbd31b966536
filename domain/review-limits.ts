import type { ReviewerSettings } from './loop-request';

// How long a review may take. The workflow cannot read a worker's settings, so it bounds a review by
// the most those settings allow; the config schema takes its ceilings from here so the two cannot drift.
// A dead worker is still noticed within the review's 20 s heartbeat timeout, whatever this bound says.

/** LLM_TIMEOUT_SECONDS's ceiling: the longest one model call may take. */
export const MAX_LLM_TIMEOUT_SECONDS = 600;
/** REVIEW_REPAIR_ATTEMPTS's ceiling: how often an invalid ledger or triage answer may be asked again. */
export const MAX_REVIEW_REPAIR_ATTEMPTS = 5;

/** The most parts one review may take (domain/review-scope.ts): REVIEW_MAX_DIFF_BYTES's ceiling is this many prompts' worth. */
export const MAX_REVIEW_PARTS = 20;

/**
 * Start-to-close bound of a review: the reviewer's answer for each part, then triage's, each with every
 * repair attempt, plus slack for the checkout.
 */
export function reviewTimeoutSeconds(reviewer: ReviewerSettings): number {
  const attempts = 1 + MAX_REVIEW_REPAIR_ATTEMPTS;
  const answerSeconds = reviewer.backend === 'agent' ? reviewer.agent.timeoutSeconds : MAX_LLM_TIMEOUT_SECONDS;
  return attempts * (MAX_REVIEW_PARTS * answerSeconds + MAX_LLM_TIMEOUT_SECONDS) + 120;
}
