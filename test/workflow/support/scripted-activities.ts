import { createHash, randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { LoopActivities } from '../../../activities';
import type { DecisionAuthorization } from '../../../activities/decision-authorization';
import type { AmbiguousTest } from '../../../activities/verification/acceptance-tests';
import type { DeliverInput, DeliverOutput } from '../../../activities/delivery';
import type { ProgressInput } from '../../../activities/progress';
import type { DeliveryPreparation } from '../../../activities/prepare-delivery';
import type { GatePlan } from '../../../domain/gates';
import { reviewSkipReason } from '../../../domain/review-when';
import { addUsage, budgetExhausted, NO_USAGE } from '../../../domain/budget';
import {
  GATE_PLAN,
  made,
  reviewed,
  verified,
  type MakerOutcome,
  type ReviewOutcome,
  type SetupOutcome,
  type VerificationOutcome,
} from './loop-results';

// Stand-ins for every activity the loop calls, each answering as the test scripted it for the loop it
// names, and a log of every call (activity name and input) in the order the workflow made them.

export type ActivityName = keyof LoopActivities;
export type InputOf<K extends ActivityName> = Parameters<LoopActivities[K]>[0];

/** What iteration #sequence's maker, verification and review give; left out: the iteration passes. */
export interface IterationScript {
  maker?: Partial<MakerOutcome>;
  /** An Error is thrown by the verification, on every attempt (the maker's activity's, then the verification activity's). */
  verification?: VerificationOutcome | Error;
  /** Thrown by the verification's first attempts (the maker's activity's first), one each, before `verification` is given. */
  verificationFailures?: Error[];
  /**
   * What the review gives, in the verification's activity (when asked) or in the review activity. A
   * non-retryable ApplicationFailure fails it in either (the verification's reports it FAILED, the review
   * activity throws it); another Error leaves the verification's review to the review activity, which throws it.
   */
  review?: ReviewOutcome | Error;
  /** The verification's review fails with this retryable reason; the review activity gives `review`. */
  reviewInVerificationFails?: string;
  /** The maker's activity does not return before this settles. */
  makerHeldUntil?: Promise<unknown>;
}

export interface LoopScript {
  gatePlan?: GatePlan;
  /** By sequence (iterations[0] is #1): a loop running more iterations than scripted fails. */
  iterations: IterationScript[];
  /** prepareWorkspace throws it. */
  prepareFailure?: Error;
  /** One for each set-up run, in order; past the end set-up passes. */
  setup?: SetupOutcome[];
  /** What each resolution of the contract's test names finds ambiguous, in order; past the end nothing is. */
  ambiguousTests?: AmbiguousTest[][];
  /** One for each decision received, in order; past the end decisions are honoured. */
  authorizations?: DecisionAuthorization[];
  pullRequestUrl?: string;
  /** What each preparation of a delivery finds, in order; past the end the base has not moved. */
  deliveries?: Array<Partial<DeliveryPreparation>>;
}

export interface Call<K extends ActivityName = ActivityName> {
  activity: K;
  input: InputOf<K>;
}

/** One loop's scripted activities: what they were called with, in the order the workflow called them. */
export interface ScriptedLoop {
  calls: Call[];
  /** Every review asked for, in order: its iteration, and the activity that was to review. */
  reviews: Array<{ sequence: number; by: 'runMaker' | 'runVerification' | 'runReview' }>;
  /** Every attempt at a verification, in order: its iteration, and the activity that made it. */
  verifications: Array<{ sequence: number; by: 'runMaker' | 'runVerification' }>;
  /** Every delivery, in order: what it delivered, the end it recorded, and the activity that delivered. */
  delivered: Array<DeliverInput & { ended: ProgressInput; by: 'prepareDelivery' | 'deliver' }>;
  /** The inputs of every call of `activity`, in order. */
  inputsOf<K extends ActivityName>(activity: K): InputOf<K>[];
  /** The `nth` call of `activity` that matches, once the workflow made it. */
  called<K extends ActivityName>(
    activity: K,
    match?: (input: InputOf<K>) => boolean,
    nth?: number,
  ): Promise<InputOf<K>>;
}

interface LoopRecord extends ScriptedLoop {
  script: LoopScript;
  setups: SetupOutcome[];
  ambiguous: AmbiguousTest[][];
  authorizations: DecisionAuthorization[];
  deliveries: Array<Partial<DeliveryPreparation>>;
  push(call: Call): void;
}

/**
 * Activities for a worker that runs many loops: each call goes to the script of the loop it names
 * (every activity input carries its loopId) and is logged for that loop.
 */
export class ScriptedLoops {
  private readonly loops = new Map<string, LoopRecord>();

  add(loopId: string, script: LoopScript): ScriptedLoop {
    const calls: Call[] = [];
    const waiters: Array<() => void> = [];
    const inputsOf = <K extends ActivityName>(activity: K) =>
      calls.filter((c) => c.activity === activity).map((c) => c.input as InputOf<K>);
    const called = <K extends ActivityName>(
      activity: K,
      match: (input: InputOf<K>) => boolean = () => true,
      nth = 1,
    ): Promise<InputOf<K>> =>
      new Promise((resolve) => {
        const check = () => {
          const found = inputsOf(activity).filter(match);
          if (found.length >= nth) resolve(found[nth - 1]!);
          else waiters.push(check);
        };
        check();
      });
    const push = (call: Call) => {
      calls.push(call);
      waiters.splice(0).forEach((wake) => wake());
    };
    const loop: LoopRecord = {
      calls,
      reviews: [],
      verifications: [],
      delivered: [],
      inputsOf,
      called,
      push,
      script,
      setups: [...(script.setup ?? [])],
      ambiguous: [...(script.ambiguousTests ?? [])],
      authorizations: [...(script.authorizations ?? [])],
      deliveries: [...(script.deliveries ?? [])],
    };
    this.loops.set(loopId, loop);
    return loop;
  }

  /** Logs the call for its loop and returns that loop's record. */
  private record<K extends ActivityName>(activity: K, input: InputOf<K>): LoopRecord {
    const loop = this.loops.get(input.loopId);
    if (!loop) throw ApplicationFailure.nonRetryable(`loop ${input.loopId} has no script`, 'UnscriptedLoop');
    loop.push({ activity, input } as Call);
    return loop;
  }

  private iteration(loop: LoopRecord, sequence: number): IterationScript {
    const scripted = loop.script.iterations[sequence - 1];
    if (!scripted)
      throw ApplicationFailure.nonRetryable(`iteration #${sequence} is not scripted`, 'UnscriptedIteration');
    return scripted;
  }

  readonly activities: LoopActivities = {
    claimContinuedRun: async (input) => {
      this.record('claimContinuedRun', input);
    },
    prepareWorkspace: async (input) => {
      const { script } = this.record('prepareWorkspace', input);
      if (script.prepareFailure) throw script.prepareFailure;
      return {
        workspacePath: `/var/lib/engineering-loop/workspaces/${input.loopId}`,
        baseCommit: 'b'.repeat(40),
        branch: `engineering-loop/${input.loopId}`,
        gatePlan: script.gatePlan ?? GATE_PLAN,
      };
    },
    freezeContract: async (input) => {
      this.record('freezeContract', input);
      return {
        version: input.version,
        hash: createHash('sha256').update(JSON.stringify(input.contract)).digest('hex'),
      };
    },
    recordProgress: async (input) => {
      this.record('recordProgress', input);
    },
    runWorkspaceSetup: async (input) => {
      const loop = this.record('runWorkspaceSetup', input);
      return loop.setups.shift() ?? { problem: null, evidenceIds: [`evidence-setup-${input.key}-1`] };
    },
    resolveAcceptanceTests: async (input) => {
      const loop = this.record('resolveAcceptanceTests', input);
      return { ambiguous: loop.ambiguous.shift() ?? [] };
    },
    runMaker: async (input) => {
      const loop = this.record('runMaker', input);
      const script = this.iteration(loop, input.sequence);
      await script.makerHeldUntil;
      const maker = made(input.sequence, script.maker);
      const asked = input.verify;
      if (!asked) return maker;
      // As the real activity does (maker-then-verify.ts): no review once the maker's usage spent the budget,
      // and a verification that fails is left to the verification activity.
      const overBudget = budgetExhausted(asked.budget, addUsage(asked.usageBefore, maker.usage)) !== null;
      try {
        const result = scriptedVerification(loop, script, input.sequence, 'runMaker', overBudget ? null : asked.review);
        return { ...maker, verification: { status: 'VERIFIED', result } };
      } catch (err) {
        return { ...maker, verification: { status: 'NOT_VERIFIED', reason: (err as Error).message } };
      }
    },
    runVerification: async (input) => {
      const loop = this.record('runVerification', input);
      const script = this.iteration(loop, input.sequence);
      return scriptedVerification(loop, script, input.sequence, 'runVerification', input.review);
    },
    runReview: async (input) => {
      const loop = this.record('runReview', input);
      loop.reviews.push({ sequence: input.sequence, by: 'runReview' });
      const review = this.iteration(loop, input.sequence).review ?? reviewed();
      if (review instanceof Error) throw review;
      return review;
    },
    backtrack: async (input) => {
      this.record('backtrack', input);
    },
    prepareDelivery: async (input) => {
      const loop = this.record('prepareDelivery', input);
      const prepared: DeliveryPreparation = {
        drift: {
          baseRef: 'main',
          baseCommit: 'b'.repeat(40),
          currentCommit: 'b'.repeat(40),
          behind: 0,
          conflicts: [],
          problem: null,
        },
        replayed: null,
        contextImpact: { level: 'NONE', reasons: [] },
        approvalRequired: false,
        ...loop.deliveries.shift(),
      };
      // As the real one: delivers when asked and nothing stands in the way.
      const { deliverWhenClear } = input;
      if (!deliverWhenClear || prepared.drift.behind > 0 || prepared.replayed || prepared.approvalRequired)
        return prepared;
      const delivery = { loopId: input.loopId, sequence: input.sequence, outcome: 'PASSED', approvedBy: null } as const;
      loop.delivered.push({ ...delivery, ended: deliverWhenClear.ended, by: 'prepareDelivery' });
      return { ...prepared, delivered: scriptedDelivery(loop.script, input.loopId) };
    },
    recordVerdict: async (input) => {
      this.record('recordVerdict', input);
    },
    recordEscalation: async (input) => {
      this.record('recordEscalation', input);
      return { escalationId: randomUUID(), reportId: randomUUID() };
    },
    recordContractApproval: async (input) => {
      this.record('recordContractApproval', input);
      return { escalationId: randomUUID(), reportId: randomUUID() };
    },
    authorizeDecision: async (input) =>
      this.record('authorizeDecision', input).authorizations.shift() ?? { honoured: true },
    recordDecision: async (input) => {
      this.record('recordDecision', input);
    },
    recordRefusedDecision: async (input) => {
      this.record('recordRefusedDecision', input);
    },
    deliver: async (input) => {
      const loop = this.record('deliver', input);
      // The real activity records the loop's end (input.ended) with the delivery.
      loop.delivered.push({ ...input, by: 'deliver' });
      return scriptedDelivery(loop.script, input.loopId);
    },
  };
}

function scriptedDelivery(script: LoopScript, loopId: string): DeliverOutput {
  return {
    reportId: `report-final-${loopId}`,
    pushedBranch: `engineering-loop/${loopId}`,
    pullRequestUrl: script.pullRequestUrl ?? null,
    deliveryError: null,
  };
}

/**
 * One attempt at iteration #sequence's verification, by the activity `by`: the script's failure for the
 * attempt (counted over both activities) is thrown; reviewed, as the real one does, when asked and no gate failed.
 */
function scriptedVerification(
  loop: LoopRecord,
  script: IterationScript,
  sequence: number,
  by: 'runMaker' | 'runVerification',
  review: unknown,
): VerificationOutcome {
  loop.verifications.push({ sequence, by });
  const attempt = loop.verifications.filter((v) => v.sequence === sequence).length;
  const failure = script.verificationFailures?.[attempt - 1];
  if (failure) throw failure;
  const verification = script.verification ?? verified(sequence);
  if (verification instanceof Error) throw verification;
  if (!review || reviewSkipReason(verification) !== null) return verification;
  loop.reviews.push({ sequence, by });
  return { ...verification, review: reviewInVerification(script) };
}

/** What the verification's activity reports of the review it was asked to do (verify-then-review.ts). */
function reviewInVerification(script: IterationScript) {
  if (script.reviewInVerificationFails)
    return { status: 'NOT_REVIEWED' as const, reason: script.reviewInVerificationFails };
  const review = script.review ?? reviewed();
  if (review instanceof ApplicationFailure && review.nonRetryable)
    return {
      status: 'REVIEWED' as const,
      outcome: { status: 'FAILED' as const, reason: review.message },
      usage: NO_USAGE,
    };
  if (review instanceof Error) return { status: 'NOT_REVIEWED' as const, reason: review.message };
  return { status: 'REVIEWED' as const, ...review };
}
