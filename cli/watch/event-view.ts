import type { TimelineEvent } from '../api-types';
import { commandLine, decisionLine, escalationLine, noteLine, phaseLine, verdictLine } from '../render/progress';

// What `watch` makes of a loop's event stream: the lines to print, the loop's current state for the
// live line, and whether it now waits for a person. Pure: the caller reads the stream.
//
// The stream may send an event again: a record that changed (an escalation decided, a set-up run adopted
// by the first iteration, a model call settled), or the rest of one commit's events after a reconnect.
// What was printed is not printed twice.

export interface LoopState {
  status: string;
  phase: string;
  roundIteration: number;
}

export class EventView {
  state: LoopState | null = null;
  private readonly printed = new Set<string>();
  private readonly escalations = new Map<number, { status: string; trigger: string }>();

  constructor(private readonly maxIterations: number | null) {}

  /** The lines for `event`: none for one already shown, or a kind `watch` leaves to `timeline` (model calls). */
  add(event: TimelineEvent): string[] {
    const d = event.detail;
    if (event.kind === 'phase') {
      this.state = {
        status: String(d.status),
        phase: String(d.phase),
        roundIteration: typeof d.roundIteration === 'number' ? d.roundIteration : 0,
      };
    }
    if (event.kind === 'escalation' && typeof d.sequence === 'number') {
      this.escalations.set(d.sequence, { status: String(d.status), trigger: String(d.trigger) });
    }
    // A command is one run whatever changed about it since; anything else is new when its title is.
    const key =
      event.kind === 'command' ? `command|${String(d.evidenceId)}` : `${event.kind}|${event.at}|${event.title}`;
    if (this.printed.has(key)) return [];
    this.printed.add(key);
    switch (event.kind) {
      case 'phase':
        return [phaseLine(event, this.maxIterations)];
      case 'command':
        return [commandLine(event)];
      case 'verdict':
        return [verdictLine(event)];
      case 'escalation':
        return d.status === 'DECIDED' ? [] : [escalationLine(event)];
      case 'decision':
        return [decisionLine(event)];
      case 'model_call':
        return [];
      default:
        return [noteLine(event)];
    }
  }

  /** The escalation the loop waits on: it says AWAITING_DECISION and one is open. */
  awaitedEscalation(): { sequence: number; trigger: string } | undefined {
    if (this.state?.status !== 'AWAITING_DECISION') return undefined;
    const open = [...this.escalations.entries()].filter(([, e]) => e.status === 'OPEN').at(-1);
    return open ? { sequence: open[0], trigger: open[1].trigger } : undefined;
  }
}
