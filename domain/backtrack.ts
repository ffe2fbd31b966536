import type { JudgeReport } from './judge';

// Backtracking (docs/design.md §8.2): an iteration worse than the best one of its round is undone — the workspace
// goes back to the better checkpoint and the maker gets a recovery brief instead of building on it.

export interface IterationScore {
  sequence: number;
  checkpointCommit: string;
  failedGates: number;
  blockingFindings: number;
  changedFiles: string[];
}

export function scoreOf(
  report: JudgeReport,
  sequence: number,
  checkpointCommit: string,
  changedFiles: string[],
): IterationScore {
  return {
    sequence,
    checkpointCommit,
    failedGates: report.gateAudit.filter((g) => g.status === 'FAILED').length,
    blockingFindings: report.findingTriage.filter((f) => f.outcome === 'BLOCKING').length,
    changedFiles,
  };
}

/** Worse = more gates failing, or as many gates failing and more blocking findings. */
export function isWorse(current: IterationScore, best: IterationScore): boolean {
  if (current.failedGates !== best.failedGates) return current.failedGates > best.failedGates;
  return current.blockingFindings > best.blockingFindings;
}

/** The directive that tells the maker what was undone and what not to try again. */
export function recoveryBrief(current: IterationScore, best: IterationScore): string {
  const files = current.changedFiles.length ? current.changedFiles.slice(0, 20).join(', ') : 'no files';
  return (
    `Recovery: iteration #${current.sequence} was worse than #${best.sequence} ` +
    `(${current.failedGates} failing gate(s) and ${current.blockingFindings} blocking finding(s) against ${best.failedGates} and ${best.blockingFindings}), ` +
    `so the workspace was reset to checkpoint ${best.checkpointCommit.slice(0, 12)}. ` +
    `Do not repeat that attempt's approach (it changed ${files}); address the directives from that checkpoint.`
  );
}
