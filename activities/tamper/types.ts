import type { ResolvedGate } from '../../domain/gates';
import type { FINDING_TOPICS } from '../../domain/ledger';
import type { FileChange } from './change-set';

// Shapes shared by the tamper rules (SPEC §3.4). detect-tampering.ts re-exports the public ones.

export type TamperRule =
  | 'GATE_ENTRYPOINT_CHANGED'
  | 'TESTS_DELETED'
  | 'TESTS_WEAKENED'
  | 'SKIP_OR_ONLY_ADDED'
  | 'SUPPRESSION_ADDED'
  | 'OUT_OF_SCOPE_CHANGE';

export interface TamperFinding {
  rule: TamperRule;
  /** One line, stable across iterations for the same defect: it feeds the finding signature. */
  title: string;
  topic: Extract<(typeof FINDING_TOPICS)[number], 'testing_gaps' | 'maintainability' | 'correctness' | 'security'>;
  location: { file: string; startLine: number; endLine: number };
  /** What changed, quoting the added/removed line(s). */
  evidence: string;
}

export interface TamperInput {
  workspace: string;
  baseCommit: string;
  checkpointCommit: string;
  /** The commands the gates run, resolved from the base commit. */
  gates: ResolvedGate[];
  /** Contract path globs the maker may touch; absent means anywhere. */
  scope?: string[];
  /** Contract outOfScope entries; entries without whitespace are path globs, free text is ignored. */
  outOfScope: string[];
}

/** What every rule works from: the input, the maker's changes, and read access to both commits. */
export interface TamperContext {
  input: TamperInput;
  changes: FileChange[];
  /** A file's text at a commit, or null when the path does not exist there. */
  read(commit: string, file: string): Promise<string | null>;
}

export type TamperCheck = (ctx: TamperContext) => Promise<TamperFinding[]>;
