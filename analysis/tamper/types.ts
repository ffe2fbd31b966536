import type { ResolvedGate } from '../../domain/gates';
import type { FINDING_TOPICS } from '../../domain/ledger';
import type { CommitReader, FileChange } from './change-set';
import type { GateEntrypoints } from './gate-entrypoints';
import type { AcceptanceTestSource } from './special-cased-values';
import type { TestFileTest } from './test-files';
import type { SyntaxInventory } from './test-inventory';

// Shapes shared by the tamper rules (docs/design.md §3.4).

export type TamperRule =
  | 'GATE_ENTRYPOINT_CHANGED'
  | 'TESTS_DELETED'
  | 'TESTS_WEAKENED'
  | 'MOCKED_MODULE_UNDER_TEST'
  | 'SKIP_OR_ONLY_ADDED'
  | 'SUPPRESSION_ADDED'
  | 'OUT_OF_SCOPE_CHANGE'
  | 'DANGLING_SYMLINK'
  | 'TEST_DATA_CHANGED'
  | 'TEST_FRAMEWORK_IN_SOURCE'
  | 'TEST_RUN_DETECTED'
  | 'EXIT_AT_IMPORT'
  | 'SPECIAL_CASED_TEST_VALUES';

/** Rules verification itself applies, from running the frozen (base) tests beside the maker's, and the differential run. */
export type VerificationRule =
  'TEST_WEAKENED' | 'FEWER_TESTS_RUN' | 'PASSES_ONLY_UNDER_CI' | 'ACCEPTANCE_TEST_AMBIGUOUS';

/** What each rule's violation would have hidden had nobody caught it: one line, for people (docs/design.md §3.4). */
export const RULE_HIDES: Record<TamperRule | VerificationRule, string> = {
  GATE_ENTRYPOINT_CHANGED:
    "the gate would have run what the maker chose instead of the repository's own check, so green would prove nothing",
  TESTS_DELETED: 'the deleted tests would no longer run, so whatever they checked could break unseen',
  TESTS_WEAKENED: 'the test would still pass with the behaviour it used to check broken',
  MOCKED_MODULE_UNDER_TEST:
    'the test would exercise a stand-in instead of the code under test, so it passes whatever the code does',
  SKIP_OR_ONLY_ADDED: 'the skipped or excluded tests would not run, so their failures would not show',
  SUPPRESSION_ADDED: 'the type or lint error the suppression silences would still be there, unreported',
  OUT_OF_SCOPE_CHANGE: 'a change outside what the contract allows would ship without anyone asking for it',
  DANGLING_SYMLINK:
    'a link to nothing would ship: tools that walk the tree fail on it, or read whatever a machine has at its target',
  TEST_DATA_CHANGED: 'the tests would compare against what the maker wrote instead of what the repository expected',
  TEST_FRAMEWORK_IN_SOURCE: 'the code would change how the tests check it, so they pass whatever it does',
  TEST_RUN_DETECTED: 'the code would behave one way under the tests and another in use, so green would prove nothing',
  EXIT_AT_IMPORT: 'the test run would stop before its tests, with the exit code the code chose',
  SPECIAL_CASED_TEST_VALUES:
    "the code would return what the acceptance test expects for the test's own inputs, and be wrong for every other",
  TEST_WEAKENED:
    "with the maker's edit to the test the gate was green, but the unedited test fails against the same code",
  PASSES_ONLY_UNDER_CI:
    'the acceptance test would pass only where CI is set, so the behaviour it checks would not hold in use',
  FEWER_TESTS_RUN: "fewer tests ran than the repository's own test files hold, so some checks silently stopped running",
  ACCEPTANCE_TEST_AMBIGUOUS:
    'any test of that name would have proven the criterion, one the maker wrote among them, not the one the contract meant',
};

export interface TamperFinding {
  rule: TamperRule;
  /** One line, stable across iterations for the same defect: it feeds the finding signature. */
  title: string;
  topic: Extract<(typeof FINDING_TOPICS)[number], 'testing_gaps' | 'maintainability' | 'correctness' | 'security'>;
  location: { file: string; startLine: number; endLine: number };
  /** What changed, quoting the added/removed line(s). */
  evidence: string;
}

/** A finding the system raises itself: a tamper rule's, or one from verification's frozen tests. */
export interface SystemFinding extends Omit<TamperFinding, 'rule'> {
  rule: TamperRule | VerificationRule;
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
  /** The test names the contract's acceptance criteria are proven by; none when absent. */
  acceptanceTests?: string[];
  /** Files the runner collects tests from that no path glob names (verification's base run knows them). */
  collectedTests?: string[];
}

/**
 * What every rule works from: the input, the maker's changes, and read access to both commits
 * (activities/tamper/detect-tampering.ts reads them from git; tests hand in texts).
 */
export interface TamperContext {
  input: TamperInput;
  changes: FileChange[];
  /** A file's text at a commit, or null when the path does not exist there. */
  read: CommitReader;
  /** Whether a changed path is a test file: by its path, or by the inline tests it holds (test-files.ts). */
  isTest: TestFileTest;
  /** A changed test file's syntax inventory at a commit; null when it cannot be parsed (Go, Rust, no python3). */
  inventory(commit: string, file: string): Promise<SyntaxInventory | null>;
  /** Every file path in the checkpoint commit. */
  checkpointFiles(): Promise<Set<string>>;
  /** Everything the base commit's gates read. */
  baseEntrypoints(): Promise<GateEntrypoints>;
  /** The base test files that declare each acceptance test, with their texts. */
  acceptanceTests(): Promise<AcceptanceTestSource[]>;
}

export type TamperCheck = (ctx: TamperContext) => Promise<TamperFinding[]>;
