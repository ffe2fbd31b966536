import type { TimelineEvent } from '../api-types';
import { abnormalEnd, clock, duration, testCounts, truncate } from './format';

// The lines `watch` prints for the events of a loop's stream: each phase with the loop's state, each
// command with its result and duration, each verdict, escalation and decision.

type Detail = Record<string, unknown>;
const text = (detail: Detail, key: string): string | null => {
  const value = detail[key];
  return typeof value === 'string' ? value : null;
};
const num = (detail: Detail, key: string): number | null => {
  const value = detail[key];
  return typeof value === 'number' ? value : null;
};

/** `10:00:01  RUNNING            phase VERIFY             iteration 1/3`. */
export function phaseLine(event: TimelineEvent, maxIterations: number | null): string {
  const status = text(event.detail, 'status') ?? '?';
  const phase = text(event.detail, 'phase') ?? '?';
  const round = num(event.detail, 'roundIteration') ?? 0;
  const failure = text(event.detail, 'failureReason');
  const iteration = `iteration ${round}/${maxIterations ?? '?'}`;
  const why = failure && status !== 'RUNNING' ? `  ${truncate(failure, 120)}` : '';
  return `${clock(event.at)}  ${status.padEnd(17)}  phase ${phase.padEnd(17)}  ${iteration}${why}`;
}

/** `10:00:03    #1 gate tests  FAILED  1.2s  exit 1; 0 passed, 2 failed`; set-up steps have no iteration. */
export function commandLine(event: TimelineEvent): string {
  const d = event.detail;
  const exitCode = num(d, 'exitCode');
  const failureReason = text(d, 'failureReason');
  const notes = [
    exitCode !== null ? `exit ${exitCode}` : null,
    abnormalEnd(text(d, 'timeoutStatus')),
    testCounts(d.testCounts as Parameters<typeof testCounts>[0]),
    // Without an exit code the reason is the news (it could not start, …); with one, `logs` has the detail.
    failureReason && exitCode === null ? truncate(failureReason, 100) : null,
  ].filter(Boolean);
  const gate = text(d, 'gate') ?? '?';
  const what = event.iteration === null ? `set-up ${gate}` : `#${event.iteration} gate ${gate}`;
  const at = text(d, 'endTime') ?? event.at;
  return `${clock(at)}    ${what}  ${text(d, 'status') ?? '?'}  ${duration(event.durationMs)}${notes.length ? `  ${notes.join('; ')}` : ''}`;
}

export function verdictLine(event: TimelineEvent): string {
  const trigger = text(event.detail, 'trigger');
  const directives = event.detail.directives;
  const first = Array.isArray(directives) && typeof directives[0] === 'string' ? directives[0] : null;
  return `${clock(event.at)}    #${event.iteration ?? '?'} verdict ${text(event.detail, 'verdict') ?? '?'}${trigger ? ` (${trigger})` : ''}${first ? `: ${truncate(first, 100)}` : ''}`;
}

/** An escalation as it opened, or how it closed other than by a decision (the decision has its own line). */
export function escalationLine(event: TimelineEvent): string {
  const sequence = num(event.detail, 'sequence') ?? '?';
  const trigger = text(event.detail, 'trigger') ?? '?';
  const status = text(event.detail, 'status') ?? '?';
  const what = status === 'OPEN' ? 'opened' : `closed (${status})`;
  return `${clock(event.at)}    escalation #${sequence} ${what}: ${trigger}`;
}

export function decisionLine(event: TimelineEvent): string {
  const d = event.detail;
  return `${clock(event.at)}    escalation #${num(d, 'escalationSequence') ?? '?'} decided: ${text(d, 'kind') ?? '?'} by ${text(d, 'actor') ?? '?'}`;
}

/** Anything else worth a line (contract versions, refused decisions, refused connections): its title. */
export function noteLine(event: TimelineEvent): string {
  return `${clock(event.at)}    ${event.iteration === null ? '' : `#${event.iteration} `}${event.title}`;
}
