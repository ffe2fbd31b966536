import type { EvidenceRecord, EvidenceView, LoopDetail } from '../api-types';
import { escalationDecidedLine, escalationOpenedLine, gateLine, stateLine, verdictLine } from '../render/progress';

// What changed between two looks at a loop, as the lines `watch` prints. Pure: the caller fetches
// the full records of new evidence (for their durations) and hands them in.

export class ProgressTracker {
  private lastState: string | null = null;
  private readonly seenEvidence = new Set<string>();
  private readonly seenVerdicts = new Set<number>();
  private readonly escalationStatus = new Map<string, string>();

  /** Evidence in `loop` not reported yet: the caller fetches these records before calling `update`. */
  unseenEvidence(loop: LoopDetail): EvidenceView[] {
    return allEvidence(loop)
      .map(({ evidence }) => evidence)
      .filter((e) => !this.seenEvidence.has(e.id));
  }

  /**
   * The lines for everything new in `loop`: results first (gates, verdicts, escalations, in the
   * order they happened), then the loop's current state if it changed.
   */
  update(loop: LoopDetail, records: ReadonlyMap<string, EvidenceRecord>, now: Date): string[] {
    const lines: string[] = [];
    for (const { iteration, evidence } of allEvidence(loop).filter(({ iteration }) => iteration === null)) {
      this.gate(lines, iteration, evidence, records, now);
    }
    for (const iteration of loop.iterations) {
      for (const evidence of iteration.evidence) this.gate(lines, iteration.sequence, evidence, records, now);
      if (iteration.verdict && !this.seenVerdicts.has(iteration.sequence)) {
        this.seenVerdicts.add(iteration.sequence);
        lines.push(verdictLine(iteration, now));
      }
    }
    for (const escalation of loop.escalations) {
      const before = this.escalationStatus.get(escalation.id);
      if (before === escalation.status) continue;
      this.escalationStatus.set(escalation.id, escalation.status);
      if (before === undefined) lines.push(escalationOpenedLine(escalation, now));
      if (escalation.status !== 'OPEN') lines.push(escalationDecidedLine(escalation, now));
    }
    const state = `${loop.status}|${loop.phase}|${loop.iteration}|${loop.maxIterations}`;
    if (state !== this.lastState) {
      this.lastState = state;
      lines.push(stateLine(loop, now));
    }
    return lines;
  }

  private gate(
    lines: string[],
    iteration: number | null,
    evidence: EvidenceView,
    records: ReadonlyMap<string, EvidenceRecord>,
    now: Date,
  ) {
    if (this.seenEvidence.has(evidence.id)) return;
    this.seenEvidence.add(evidence.id);
    lines.push(gateLine(iteration, evidence, records.get(evidence.id), now));
  }
}

function allEvidence(loop: LoopDetail): Array<{ iteration: number | null; evidence: EvidenceView }> {
  return [
    ...(loop.workspaceSetup ?? []).map((evidence) => ({ iteration: null, evidence })),
    ...loop.iterations.flatMap((i) => i.evidence.map((evidence) => ({ iteration: i.sequence, evidence }))),
  ];
}
