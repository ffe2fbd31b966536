import type { EscalationView, LoopDetail, LoopSummary } from '../cli/api-types';
import { findingCounts, openEscalation } from '../cli/render/loop';

// The text half of each tool's answer: a few lines a person or a model reads at a glance. The
// structured content carries everything.

type LoopState = Pick<LoopSummary, 'id' | 'status' | 'phase' | 'iteration' | 'maxIterations' | 'lastVerdict'>;

/** `loop 3f2c… RUNNING (phase VERIFY, iteration 2/3, last verdict ITERATE)`. */
export function loopStateLine(loop: LoopState): string {
  const verdict = loop.lastVerdict ? `, last verdict ${loop.lastVerdict}` : '';
  return `loop ${loop.id} ${loop.status} (phase ${loop.phase}, iteration ${loop.iteration}/${loop.maxIterations}${verdict})`;
}

/** What to call to decide an open escalation. */
export function decideHint(loopId: string, escalation: Pick<EscalationView, 'id' | 'sequence' | 'trigger'>): string {
  return (
    `It waits for a human decision on escalation #${escalation.sequence} (${escalation.trigger}), id ${escalation.id}: ` +
    `read it with get_report, then call decide_escalation with loopId ${loopId} and ` +
    `decision { kind: approve | reject | retry (with guidance) | amend (with contract), escalationId: "${escalation.id}" }.`
  );
}

export function loopDetailText(loop: LoopDetail): string {
  const lines = [loopStateLine(loop), `repository ${loop.repository.url} (${loop.repository.baseRef})`];
  if (loop.branch) lines.push(`branch ${loop.branch}`);
  if (loop.failureReason) lines.push(`failure: ${loop.failureReason}`);
  for (const iteration of loop.iterations) {
    const gates = iteration.evidence.map((e) => `${e.gate} ${e.status}`).join(', ') || 'no gates yet';
    const verdict = iteration.verdict
      ? `${iteration.verdict.verdict}${iteration.verdict.trigger ? ` (${iteration.verdict.trigger})` : ''}`
      : 'no verdict yet';
    lines.push(`#${iteration.sequence}: ${gates}; findings ${findingCounts(iteration.findings)}; ${verdict}`);
  }
  const delivery = loop.delivery;
  if (delivery?.pushedBranch) lines.push(`delivered: pushed ${delivery.pushedBranch}`);
  if (delivery?.pullRequestUrl) lines.push(`pull request ${delivery.pullRequestUrl}`);
  if (delivery?.deliveryError) lines.push(`delivery error: ${delivery.deliveryError}`);
  const open = openEscalation(loop);
  if (open && loop.status === 'AWAITING_DECISION') lines.push(decideHint(loop.id, open));
  return lines.join('\n');
}
