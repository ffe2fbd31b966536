import type { EscalationView, EvidenceRecord, EvidenceView, IterationView, LoopSummary } from '../api-types';
import { abnormalEnd, between, clock, duration, testCounts, truncate } from './format';

// The lines `watch` prints as a loop moves: its state, each gate result, each verdict, each escalation.

export function stateLine(
  loop: Pick<LoopSummary, 'status' | 'phase' | 'iteration' | 'maxIterations'>,
  at: Date,
): string {
  return `${clock(at)}  ${loop.status.padEnd(17)}  phase ${loop.phase.padEnd(17)}  iteration ${loop.iteration}/${loop.maxIterations}`;
}

/**
 * `#2 gate tests  FAILED  1.2s  exit 1; 0 passed, 2 failed`. `record` is the full evidence record
 * when it could be read (it has the start and end times), else the loop view's entry.
 */
export function gateLine(
  iteration: number | null,
  evidence: EvidenceView,
  record: EvidenceRecord | undefined,
  now: Date,
): string {
  const at = record?.endTime ?? now;
  const took = duration(between(record?.startTime, record?.endTime));
  const notes = [
    evidence.exitCode !== null && evidence.exitCode !== undefined ? `exit ${evidence.exitCode}` : null,
    abnormalEnd(evidence.timeoutStatus),
    testCounts(evidence.testCounts),
    // Without an exit code the reason is the news (it could not start, …); with one, `logs` has the detail.
    evidence.failureReason && (evidence.exitCode === null || evidence.exitCode === undefined)
      ? truncate(evidence.failureReason, 100)
      : null,
  ].filter(Boolean);
  const what = iteration === null ? `set-up ${evidence.gate}` : `#${iteration} gate ${evidence.gate}`;
  return `${clock(at)}    ${what}  ${evidence.status}  ${took}${notes.length ? `  ${notes.join('; ')}` : ''}`;
}

export function verdictLine(iteration: IterationView, now: Date): string {
  const verdict = iteration.verdict;
  if (!verdict) return '';
  const trigger = verdict.trigger ? ` (${verdict.trigger})` : '';
  const first = verdict.directives?.[0];
  return `${clock(now)}    #${iteration.sequence} verdict ${verdict.verdict}${trigger}${first ? `: ${truncate(first, 100)}` : ''}`;
}

export function escalationOpenedLine(escalation: EscalationView, now: Date): string {
  return `${clock(escalation.createdAt ?? now)}    escalation #${escalation.sequence} opened: ${escalation.trigger}`;
}

export function escalationDecidedLine(escalation: EscalationView, now: Date): string {
  const d = escalation.decision;
  const by = d ? `${d.kind} by ${d.actor}` : escalation.status.toLowerCase();
  return `${clock(d?.createdAt ?? now)}    escalation #${escalation.sequence} decided: ${by}`;
}
