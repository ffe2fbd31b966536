import type { LoopRequest } from '../domain/loop-request';
import { classifyRepositoryUrl } from '../domain/repository-url';

// What a submitter should know before the loop runs, in the answer to POST /v1/loops (`notes`). Delivery
// pushing a branch into a repository on the submitter's own disk is the default, and easy to miss.

/** The branch delivery pushes (activities/workspace.ts loopBranch, which the worker uses). */
const deliveredBranch = (loopId: string) => `engineering-loop/${loopId}`;

export function submissionNotes(loopId: string, request: LoopRequest): string[] {
  const target = request.delivery.pushUrl ?? request.repository.url;
  const source = classifyRepositoryUrl(target);
  if (!request.delivery.push || !source.ok || !source.local) return [];
  return [
    `When the loop passes or is approved, delivery pushes the branch ${deliveredBranch(loopId)} into the local repository ${target}. ` +
      `To leave it untouched, submit with "delivery": { "push": false }; the change is then at GET /v1/loops/${loopId}/patch.`,
  ];
}
