import { deprecatePatch, setCurrentDetails, upsertSearchAttributes, type ActivityOptions } from '@temporalio/workflow';
import type { IterationScore } from '../domain/backtrack';
import { NO_USAGE, type Usage } from '../domain/budget';
import type { GoalContract } from '../domain/contract';
import type { Decision } from '../domain/decision';
import type { GatePlan } from '../domain/gates';
import type { IterationRecord } from '../domain/judge';
import type { LoopInput, LoopRequest } from '../domain/loop-request';
import type { LoopPhase, LoopState, LoopStatus } from '../domain/loop-state';
import type { ProgressInput } from '../activities/progress';
import { records } from './activities';
import { currentDetails } from './details';
import { LOCAL_RECORDS, PROGRESS_IN_PHASE_ACTIVITIES } from './patches';
import { LoopIterationKey, LoopPhaseKey, LoopStatusKey, LoopVerdictKey } from './search-attributes';

/** A decision as it arrived, and through which message. */
export interface ReceivedDecision {
  decision: Decision;
  channel: 'update' | 'signal';
}

/**
 * One run of a loop: what the workflow holds between its phases, and how the loop moves from phase to
 * phase — in the query state, the Web UI's search attributes and the PostgreSQL read model.
 */
export class LoopRun {
  readonly loopId: string;
  readonly request: LoopRequest;
  /** This run continues a loop a human sent back to the maker (its state came with the input). */
  readonly resumed: boolean;
  readonly state: LoopState;
  contract: GoalContract;
  /** Set by the workspace's preparation, or carried by the resume. */
  gatePlan!: GatePlan;
  escalations: number;
  directives: string[];
  usage: Usage;
  /** The maker's workspace must be set up (again) before the next maker. */
  setupDue: boolean;
  /** The judge's records of this run's iterations, and the best-scoring one (for backtracking). */
  previous: IterationRecord[] = [];
  best: IterationScore | null = null;
  pendingDecision: ReceivedDecision | undefined;
  /** Numbers the moves the read model gets, so every attempt of a move's write records one event. */
  private moves = 0;

  constructor({ loopId, request, resume }: LoopInput) {
    this.loopId = loopId;
    this.request = request;
    this.resumed = resume !== undefined;
    this.state = {
      loopId,
      status: 'RUNNING',
      phase: resume ? 'MAKER' : 'PREPARING',
      contractVersion: resume?.contractVersion ?? 0,
      contractHash: resume?.contractHash ?? null,
      roundIteration: 0,
      maxIterations: request.maxIterations,
      sequence: resume?.sequence ?? 0,
      lastVerdict: null,
      awaitingDecision: null,
      iterations: [],
      failureReason: null,
      pause: resume?.pause ?? null,
    };
    this.contract = resume?.contract ?? request.contract;
    if (resume) this.gatePlan = resume.gatePlan;
    this.escalations = resume?.escalations ?? 0;
    this.directives = resume?.directives ?? [];
    this.usage = resume?.usage ?? NO_USAGE;
    this.setupDue = !resume || resume.setupDue === true;
  }

  /** Where the loop's records are written: local activities (no task-queue round trip). */
  recorder(): typeof records {
    deprecatePatch(LOCAL_RECORDS);
    return records;
  }

  /** Moves the loop on, and writes the move to the read model itself. */
  async transition(status: LoopStatus, phase: LoopPhase, failureReason?: string): Promise<void> {
    // The search attributes before recorder()'s patch marker, in the order histories have them.
    const progress = this.moveTo(status, phase, failureReason);
    await this.recorder().recordProgress(progress);
  }

  /**
   * Moves the loop into a phase whose first activity records it in Postgres (one round trip, not two):
   * returns that record, for the activity's `progress`. `patch`: the retired patch that made it so.
   */
  enterPhase(phase: LoopPhase, patch = PROGRESS_IN_PHASE_ACTIVITIES): ProgressInput {
    deprecatePatch(patch);
    return this.moveTo('RUNNING', phase);
  }

  /** The move in the query state and the Web UI's search attributes; what the read model gets. */
  moveTo(status: LoopStatus, phase: LoopPhase, failureReason?: string): ProgressInput {
    this.show(status, phase, failureReason);
    return this.progressRecord(status, phase, failureReason);
  }

  /** The move in the query state and the Web UI's search attributes only: its record was made before. */
  show(status: LoopStatus, phase: LoopPhase, failureReason?: string): void {
    this.state.status = status;
    this.state.phase = phase;
    if (failureReason) this.state.failureReason = failureReason;
    setCurrentDetails(currentDetails(this.state));
    upsertSearchAttributes([
      { key: LoopStatusKey, value: status },
      { key: LoopPhaseKey, value: phase },
      { key: LoopIterationKey, value: this.state.roundIteration },
      ...(this.state.lastVerdict ? [{ key: LoopVerdictKey, value: this.state.lastVerdict }] : []),
    ]);
  }

  /** What the read model gets for a move to `status` and `phase` from the current state. */
  progressRecord(status: LoopStatus, phase: LoopPhase, failureReason?: string): ProgressInput {
    this.moves += 1;
    const { loopId, state } = this;
    return {
      loopId,
      status,
      phase,
      roundIteration: state.roundIteration,
      lastVerdict: state.lastVerdict,
      failureReason: failureReason ?? null,
      move: this.moves,
    };
  }

  /** Freezes the current contract as `version`; `progress`: the move into CONTRACT, written with it. */
  async freeze(version: number, reason: string, progress?: ProgressInput): Promise<void> {
    const frozen = await this.recorder().freezeContract.executeWithOptions(withSummary(`freeze contract v${version}`), [
      { loopId: this.loopId, version, contract: this.contract, reason, ...(progress && { progress }) },
    ]);
    this.state.contractVersion = frozen.version;
    this.state.contractHash = frozen.hash;
  }

  /** An activity's summary in the Web UI: the phase and where the loop is. */
  label(phase: string): string {
    return `${phase} · iteration ${this.state.roundIteration} of ${this.state.maxIterations} (#${this.state.sequence})`;
  }
}

export function withSummary(summary: string, extra: ActivityOptions = {}): ActivityOptions {
  return { summary, ...extra };
}
