import type { EscalationTrigger, Verdict } from './judge';

// The loop's state as the workflow holds it and the `loopState` query returns it.

export const LOOP_STATUSES = [
  'RUNNING',
  'AWAITING_DECISION',
  /** A person paused the loop: it holds before its next maker until resumed (workflows/pause.ts). */
  'PAUSED',
  'PASSED',
  'APPROVED',
  'REJECTED',
  'CANCELLED',
  'FAILED',
  /** The loop's workflow run was ended outside the service (api/run-ended-outside.ts). */
  'TERMINATED',
] as const;
export type LoopStatus = (typeof LOOP_STATUSES)[number] | 'QUEUED';
export const TERMINAL_STATUSES: readonly LoopStatus[] = [
  'PASSED',
  'APPROVED',
  'REJECTED',
  'CANCELLED',
  'FAILED',
  'TERMINATED',
];

export type LoopPhase =
  | 'QUEUED'
  | 'PREPARING'
  | 'CONTRACT'
  | 'SETUP'
  | 'MAKER'
  | 'VERIFY'
  | 'REVIEW'
  | 'JUDGE'
  | 'AWAITING_DECISION'
  | 'DONE';

export interface IterationState {
  sequence: number;
  roundIteration: number;
  contractVersion: number;
  checkpointCommit: string | null;
  verdict: Verdict | null;
  trigger: EscalationTrigger | null;
}

export interface LoopState {
  loopId: string;
  status: LoopStatus;
  phase: LoopPhase;
  contractVersion: number;
  contractHash: string | null;
  /** K of N: resets to 1 when a human sends the loop back to the maker. */
  roundIteration: number;
  maxIterations: number;
  /** Counts every iteration the loop ran, across rounds. */
  sequence: number;
  lastVerdict: Verdict | null;
  awaitingDecision: { escalationSequence: number; trigger: string } | null;
  /** Set while a person's pause stands (absent from states of loops started before pausing existed). */
  pause?: LoopPause | null;
  iterations: IterationState[];
  failureReason: string | null;
}

/** A person's pause: the loop finishes its current step and holds before its next maker until resumed. */
export interface LoopPause {
  actor: string;
  reason: string | null;
  /** Workflow time, ISO 8601. */
  requestedAt: string;
}
