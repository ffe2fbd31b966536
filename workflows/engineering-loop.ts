import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import { addUsage, budgetExhausted, NO_USAGE, type Usage } from '../domain/budget';
import { isWorse, recoveryBrief, scoreOf, type IterationScore } from '../domain/backtrack';
import type { GoalContract } from '../domain/contract';
import { applyDecision, decisionSchema, InvalidDecisionError, type Decision } from '../domain/decision';
import type { GatePlan } from '../domain/gates';
import { computeVerdict, environmentReport, type IterationRecord, type JudgeReport, type ReviewOutcome } from '../domain/judge';
import { describeIssues } from '../domain/ledger';
import { loopInputSchema, type LoopInput, type LoopResume } from '../domain/loop-request';
import type { LoopPhase, LoopState, LoopStatus } from '../domain/loop-state';
import { describeProof } from '../domain/proof';
import { reviewTimeoutSeconds } from '../domain/review-limits';
import { MAX_SETUP_TIMEOUT_SECONDS, touchesSetupInputs } from '../domain/setup';
import type { ProgressInput } from '../activities/progress';
import { bookkeeping, gitWork, records, work } from './activities';
import { decideUpdate, decisionSignal, INVALID_DECISION, loopStateQuery, NOT_AWAITING_DECISION } from './messages';
import { LoopIterationKey, LoopPhaseKey, LoopPullRequestKey, LoopStatusKey, LoopVerdictKey } from './search-attributes';

// Behaviour added while loops were running: patched() keeps the histories of those loops replaying.
/** A received decision is acted on only once the authorizeDecision activity honours it. */
const AUTHORIZE_DECISIONS = 'authorize-decisions';
/** A decision deadline never approves an escalation that carries system BLOCKER findings. */
const DEADLINE_SPARES_SYSTEM_BLOCKERS = 'deadline-spares-system-blockers';
/** Dependencies are installed in the maker's workspace (SETUP) before the first maker and after a manifest changed. */
const SETUP_PHASE = 'setup-phase';
const DEADLINE_ACTOR = 'system:decision-deadline';
/** Delivery may push and open a pull request (longer timeout); its URL becomes the LoopPullRequest search attribute. */
const DELIVER_PULL_REQUEST = 'deliver-pull-request';
/** The loop's record writes are local activities (no task-queue round trip; a lost worker costs seconds). */
const LOCAL_RECORDS = 'local-records';
/** A decision signal the loop cannot take is recorded as refused, so its sender can see it was ignored. */
const RECORD_REFUSED_SIGNALS = 'record-refused-signals';
/** Entering the maker, verify, review and judge phases is recorded by the phase's own first activity: no write of its own. */
const PROGRESS_IN_PHASE_ACTIVITIES = 'progress-in-phase-activities';
/** Entering PREPARING and CONTRACT is recorded by prepareWorkspace and the contract's freeze, like the later phases. */
const START_PROGRESS_IN_ACTIVITIES = 'start-progress-in-activities';
/** The checkpoint's tamper and scope check runs in the maker's activity, right after the checkpoint commit: no round trip of its own. */
const INSPECT_IN_MAKER_ACTIVITY = 'inspect-in-maker-activity';
/** The loop's end (PASSED or APPROVED) is recorded by the delivery activity once it delivered: no write of its own. */
const END_IN_DELIVERY = 'end-in-delivery';

/** A decision as it arrived, and through which message. */
interface ReceivedDecision {
  decision: Decision;
  channel: 'update' | 'signal';
}

export interface LoopOutcome {
  status: LoopStatus;
  iterations: number;
  reportId: string | null;
}

/**
 * One engineering loop. A run covers one round — iterations until PASS or an escalation — and, when a
 * human sends the loop back to the maker, continues as a new run carrying its state (LoopResume), so
 * the history of a loop that escalates many times stays bounded.
 */
export async function engineeringLoop(rawInput: LoopInput): Promise<LoopOutcome> {
  const parsed = loopInputSchema.safeParse(rawInput);
  if (!parsed.success) {
    throw ApplicationFailure.create({
      type: 'InvalidLoopInput',
      message: `invalid loop input: ${describeIssues(parsed.error.issues).join('; ')}`,
      nonRetryable: true,
    });
  }
  const { loopId, request, resume } = parsed.data;
  const state: LoopState = {
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
  };
  let contract: GoalContract = resume?.contract ?? request.contract;
  // Numbers the moves the read model gets, so every attempt of a move's write records one event.
  let moves = 0;
  let pendingDecision: ReceivedDecision | undefined;

  /** Why a decision cannot be taken now, or null. Shared by the update's validator and the signal. */
  function decisionProblem(raw: unknown): { type: string; message: string } | null {
    const decision = decisionSchema.safeParse(raw);
    if (!decision.success) return { type: INVALID_DECISION, message: describeIssues(decision.error.issues).join('; ') };
    if (!state.awaitingDecision || pendingDecision) {
      return { type: NOT_AWAITING_DECISION, message: `loop ${loopId} is not awaiting a decision (status ${state.status})` };
    }
    // A decision naming another escalation was made on a stale view of the loop.
    const named = decision.data.escalationSequence;
    const open = state.awaitingDecision.escalationSequence;
    if (named !== undefined && named !== open) {
      return { type: NOT_AWAITING_DECISION, message: `loop ${loopId} is not awaiting a decision on escalation #${named} (escalation #${open} is open)` };
    }
    try {
      applyDecision(decision.data, contract);
    } catch (err) {
      if (err instanceof InvalidDecisionError) return { type: INVALID_DECISION, message: err.message };
      throw err;
    }
    return null;
  }

  setHandler(loopStateQuery, () => state);
  setHandler(
    decideUpdate,
    (decision) => {
      pendingDecision = { decision, channel: 'update' };
      return { escalationSequence: state.awaitingDecision!.escalationSequence, kind: decision.kind };
    },
    {
      validator: (decision) => {
        const problem = decisionProblem(decision);
        if (problem) throw ApplicationFailure.create({ ...problem, nonRetryable: true });
      },
    },
  );
  setHandler(decisionSignal, async (decision) => {
    const problem = decisionProblem(decision);
    if (!problem) {
      pendingDecision = { decision, channel: 'signal' };
      return;
    }
    log.warn('ignored a decision signal', problem);
    if (!patched(RECORD_REFUSED_SIGNALS)) return;
    await recorder().recordRefusedDecision({ loopId, refusalId: uuid4(), channel: 'signal', detail: `${describeSignal(decision)} refused: ${problem.message}` });
  });

  /** Where the loop's records are written: local activities, or ordinary ones in runs started before they were. */
  function recorder(): typeof records | typeof bookkeeping {
    return patched(LOCAL_RECORDS) ? records : bookkeeping;
  }

  /** Moves the loop on, in the query state, the Web UI's search attributes and the Postgres read model. */
  async function transition(status: LoopStatus, phase: LoopPhase, failureReason?: string): Promise<void> {
    // The search attributes before recorder()'s patch marker, in the order histories have them.
    const progress = moveTo(status, phase, failureReason);
    await recorder().recordProgress(progress);
  }

  /**
   * Moves the loop into a phase whose first activity records it in Postgres: returns that record, for the
   * activity's `progress`. Before `since` (the patch that made that phase's activity write it) the move
   * was a write of its own.
   */
  async function enterPhase(phase: LoopPhase, since = PROGRESS_IN_PHASE_ACTIVITIES): Promise<ProgressInput | undefined> {
    if (!patched(since)) {
      await transition('RUNNING', phase);
      return undefined;
    }
    return moveTo('RUNNING', phase);
  }

  /** The move in the query state and the Web UI's search attributes; what the read model gets. */
  function moveTo(status: LoopStatus, phase: LoopPhase, failureReason?: string): ProgressInput {
    state.status = status;
    state.phase = phase;
    if (failureReason) state.failureReason = failureReason;
    setCurrentDetails(currentDetails(state));
    upsertSearchAttributes([
      { key: LoopStatusKey, value: status },
      { key: LoopPhaseKey, value: phase },
      { key: LoopIterationKey, value: state.roundIteration },
      ...(state.lastVerdict ? [{ key: LoopVerdictKey, value: state.lastVerdict }] : []),
    ]);
    return progressRecord(status, phase, failureReason);
  }

  /** What the read model gets for a move to `status` and `phase` from the current state. */
  function progressRecord(status: LoopStatus, phase: LoopPhase, failureReason?: string): ProgressInput {
    moves += 1;
    return { loopId, status, phase, roundIteration: state.roundIteration, lastVerdict: state.lastVerdict, failureReason: failureReason ?? null, move: moves };
  }

  /**
   * Opens escalation number `escalationSequence` (its report written by `record`) and waits, durably,
   * for a decision that is honoured — or for the deadline, after which the configured default applies.
   * `systemBlockers`: how many system BLOCKER findings (tampering, scope) the escalation carries.
   */
  async function awaitDecision(escalationSequence: number, trigger: string, record: () => Promise<unknown>, systemBlockers = 0): Promise<Decision> {
    // Accept decisions from here on: the API may see the escalation row before `record` returns.
    state.awaitingDecision = { escalationSequence, trigger };
    await record();
    await transition('AWAITING_DECISION', 'AWAITING_DECISION');
    const deadlineSeconds = request.escalation.decisionDeadlineSeconds;
    const deadlineAt = deadlineSeconds ? Date.now() + deadlineSeconds * 1000 : null;
    let decision: Decision | null = null;
    while (!decision) {
      decision = (await decisionArrives(deadlineAt)) ? await honoured(pendingDecision!, escalationSequence) : atDeadline(deadlineSeconds!, systemBlockers);
      pendingDecision = undefined;
    }
    state.awaitingDecision = null;
    await recorder().recordDecision.executeWithOptions(withSummary(`decision: ${decision.kind} by ${decision.actor}`), [
      { loopId, escalationSequence, decision },
    ]);
    return decision;
  }

  /** Waits for a decision until `deadlineAt` (workflow time; null: no deadline). False once the deadline passed. */
  async function decisionArrives(deadlineAt: number | null): Promise<boolean> {
    if (deadlineAt === null) return condition(() => pendingDecision !== undefined).then(() => true);
    const left = deadlineAt - Date.now();
    return left > 0 && condition(() => pendingDecision !== undefined, left);
  }

  /**
   * The decision to act on, or null when authorizeDecision refuses it (it records why; the loop keeps
   * waiting). The API's ticket ends up in this run's history, which is acceptable: it is single-use and
   * fits only this decision on this escalation. It goes no further (Decision row, summaries, logs).
   */
  async function honoured({ decision, channel }: ReceivedDecision, escalationSequence: number): Promise<Decision | null> {
    if (!patched(AUTHORIZE_DECISIONS)) return decision;
    const authorization = await recorder().authorizeDecision.executeWithOptions(withSummary(`authorize ${decision.kind} by ${decision.actor}`), [
      { loopId, escalationSequence, decision, channel, refusalId: uuid4() },
    ]);
    if (!authorization.honoured) {
      log.warn('refused a decision', { escalationSequence, channel, actor: decision.actor, reason: authorization.reason });
      return null;
    }
    return { ...decision, ticket: undefined };
  }

  /** What applies when nobody decided in time. A deadline never approves what the system itself flagged. */
  function atDeadline(seconds: number, systemBlockers: number): Decision {
    const comment = `no decision within ${seconds} s`;
    const vetoed = request.escalation.defaultDecision === 'approve' && systemBlockers > 0 && patched(DEADLINE_SPARES_SYSTEM_BLOCKERS);
    return vetoed
      ? {
          kind: 'reject',
          actor: DEADLINE_ACTOR,
          comment: `${comment}; the default approve does not apply to ${systemBlockers} system BLOCKER finding(s) (tampering or out-of-scope changes)`,
        }
      : { kind: request.escalation.defaultDecision, actor: DEADLINE_ACTOR, comment };
  }

  /** Freezes the current contract as `version`; `progress`: the move into CONTRACT, written with it. */
  async function freeze(version: number, reason: string, progress?: ProgressInput): Promise<void> {
    const frozen = await recorder().freezeContract.executeWithOptions(withSummary(`freeze contract v${version}`), [
      { loopId, version, contract, reason, ...(progress && { progress }) },
    ]);
    state.contractVersion = frozen.version;
    state.contractHash = frozen.hash;
  }

  async function end(status: 'REJECTED'): Promise<LoopOutcome> {
    await transition(status, 'DONE');
    await condition(allHandlersFinished);
    return { status, iterations: state.sequence, reportId: null };
  }

  async function deliver(outcome: 'PASSED' | 'APPROVED_BY_HUMAN', approvedBy: string | null): Promise<LoopOutcome> {
    const pushes = patched(DELIVER_PULL_REQUEST);
    const status = outcome === 'PASSED' ? 'PASSED' : 'APPROVED';
    // The end as the read model gets it once delivery succeeded (the state and the Web UI move after it).
    const ended = patched(END_IN_DELIVERY) ? progressRecord(status, 'DONE') : null;
    const delivered = await gitWork.deliver.executeWithOptions(
      withSummary(approvedBy ? 'deliver (human override)' : 'deliver', pushes ? { startToCloseTimeout: '10m' } : {}),
      [{ loopId, sequence: state.sequence, outcome, approvedBy, ...(ended && { ended }) }],
    );
    if (pushes && delivered.pullRequestUrl) upsertSearchAttributes([{ key: LoopPullRequestKey, value: delivered.pullRequestUrl.slice(0, 1000) }]);
    if (delivered.endRecorded) moveTo(status, 'DONE');
    else await transition(status, 'DONE');
    await condition(allHandlersFinished);
    return { status, iterations: state.sequence, reportId: delivered.reportId };
  }

  const label = (phase: string) => `${phase} · iteration ${state.roundIteration} of ${state.maxIterations} (#${state.sequence})`;
  const withSummary = (summary: string, extra: ActivityOptions = {}): ActivityOptions => ({ summary, ...extra });

  try {
    let gatePlan: GatePlan;
    let escalations = resume?.escalations ?? 0;
    let directives = resume?.directives ?? [];
    let usage: Usage = resume?.usage ?? NO_USAGE;

    if (resume) {
      gatePlan = resume.gatePlan;
    } else {
      const preparing = await enterPhase('PREPARING', START_PROGRESS_IN_ACTIVITIES);
      ({ gatePlan } = await gitWork.prepareWorkspace.executeWithOptions(withSummary('prepare workspace', { startToCloseTimeout: '10m' }), [
        { loopId, repository: request.repository, contractGates: request.gates, ...(preparing && { progress: preparing }) },
      ]));
      await freeze(1, 'submitted', await enterPhase('CONTRACT', START_PROGRESS_IN_ACTIVITIES));

      if (request.requireContractApproval) {
        escalations += 1;
        const sequence = escalations;
        const decision = await awaitDecision(sequence, 'CONTRACT_APPROVAL', () =>
          recorder().recordContractApproval.executeWithOptions(withSummary('contract approval requested'), [
            { loopId, escalationSequence: sequence, contractVersion: state.contractVersion },
          ]),
        );
        const effect = applyDecision(decision, contract);
        if (effect.action === 'END_REJECTED') return await end('REJECTED');
        if (effect.action === 'RESUME') {
          contract = effect.contract;
          await freeze(state.contractVersion + 1, effect.reason);
        }
      }
    }

    /**
     * The SETUP phase: installs dependencies in the maker's workspace. A failure goes to a human as an
     * ENVIRONMENT escalation (never to the maker); retry or amend runs the set-up again, approve goes on
     * without it, reject ends the loop. Returns the loop's outcome when it ended, else null.
     */
    async function setUp(): Promise<LoopOutcome | null> {
      for (;;) {
        await transition('RUNNING', 'SETUP');
        const setup = await work.runWorkspaceSetup.executeWithOptions(
          withSummary(state.sequence ? `set-up after #${state.sequence}` : 'set-up', { startToCloseTimeout: `${MAX_SETUP_TIMEOUT_SECONDS * 2}s` }),
          [{ loopId, key: `${state.sequence}.${escalations}` }],
        );
        if (setup.problem === null) return null;
        escalations += 1;
        const escalationSequence = escalations;
        const report = environmentReport(setup.problem, state.roundIteration, state.maxIterations);
        const decision = await awaitDecision(escalationSequence, 'ENVIRONMENT', () =>
          recorder().recordEscalation.executeWithOptions(withSummary(`escalation ${escalationSequence}: ENVIRONMENT (set-up)`), [
            { loopId, escalationSequence, sequence: state.sequence, report },
          ]),
        );
        const effect = applyDecision(decision, contract);
        if (effect.action === 'END_REJECTED') return end('REJECTED');
        if (effect.action === 'DELIVER_OVERRIDE') return null;
        contract = effect.contract;
        await freeze(state.contractVersion + 1, effect.reason);
        if (effect.guidance) directives = [...directives, `${directives.length + 1}. Human guidance: ${effect.guidance}`];
      }
    }

    let setupDue = !resume || resume.setupDue === true;
    let previous: IterationRecord[] = [];
    let best: IterationScore | null = null;
    for (;;) {
      if (setupDue && (gatePlan.setup?.commands.length ?? 0) > 0 && patched(SETUP_PHASE)) {
        const ended = await setUp();
        if (ended) return ended;
      }
      setupDue = false;
      state.sequence += 1;
      state.roundIteration += 1;
      const sequence = state.sequence;
      state.iterations.push({
        sequence,
        roundIteration: state.roundIteration,
        contractVersion: state.contractVersion,
        checkpointCommit: null,
        verdict: null,
        trigger: null,
      });
      const iteration = state.iterations[state.iterations.length - 1]!;

      const makerProgress = await enterPhase('MAKER');
      const inspectsCheckpoint = patched(INSPECT_IN_MAKER_ACTIVITY);
      const maker = await work.runMaker.executeWithOptions(
        withSummary(label('maker'), { startToCloseTimeout: `${request.maker.timeoutSeconds + 120}s` }),
        [
          {
            loopId,
            sequence,
            roundIteration: state.roundIteration,
            maxIterations: state.maxIterations,
            contractVersion: state.contractVersion,
            directives,
            maker: request.maker,
            progress: makerProgress,
            ...(inspectsCheckpoint && { inspect: { gates: gatePlan.gates } }),
          },
        ],
      );
      usage = addUsage(usage, maker.usage);
      iteration.checkpointCommit = maker.checkpointCommit;
      // A changed manifest or lockfile: the maker's workspace is set up again before the next maker.
      setupDue = touchesSetupInputs(maker.changedFiles);

      const verifyProgress = await enterPhase('VERIFY');
      const inspected =
        maker.inspected ??
        (await gitWork.inspectChanges.executeWithOptions(withSummary(label('tamper and scope check')), [
          { loopId, sequence, contractVersion: state.contractVersion, gates: gatePlan.gates, progress: verifyProgress },
        ]));
      const verification = await work.runVerification.executeWithOptions(
        withSummary(label('verify'), { startToCloseTimeout: verificationTimeout([...gatePlan.gates, ...(gatePlan.setup?.commands ?? [])], contract.acceptanceCriteria) }),
        [{ loopId, sequence, contractVersion: state.contractVersion, gates: gatePlan.gates, checkpointCommit: maker.checkpointCommit, ...(maker.inspected && { progress: verifyProgress }) }],
      );
      // Verification adds what the frozen tests showed (absent from results recorded before it existed).
      const systemFindings = [...inspected, ...(verification.systemFindings ?? [])];

      let review: ReviewOutcome;
      const overBudget = budgetExhausted(request.budget, usage);
      if (verification.gates.some((g) => g.status === 'FAILED')) {
        review = { status: 'SKIPPED', reason: 'a configured gate failed' };
      } else if (verification.environmentProblem) {
        review = { status: 'SKIPPED', reason: 'the verification checkout could not be set up' };
      } else if (overBudget) {
        review = { status: 'SKIPPED', reason: overBudget };
      } else {
        const reviewProgress = await enterPhase('REVIEW');
        const reviewed = await reviewOrFailure(() =>
          work.runReview.executeWithOptions(withSummary(label('review'), { startToCloseTimeout: `${reviewTimeoutSeconds(request.reviewer)}s` }), [
            {
              loopId,
              sequence,
              contractVersion: state.contractVersion,
              reviewer: request.reviewer,
              profile: gatePlan.profile,
              priorSignatures: [...new Set(previous.flatMap((p) => p.blockingSignatures))],
              checkpointCommit: maker.checkpointCommit,
              progress: reviewProgress,
            },
          ]),
        );
        review = reviewed.outcome;
        usage = addUsage(usage, reviewed.usage);
      }

      const judgeProgress = await enterPhase('JUDGE');
      const report: JudgeReport = computeVerdict({
        roundIteration: state.roundIteration,
        maxIterations: state.maxIterations,
        gates: verification.gates,
        acceptanceChecks: verification.acceptanceChecks,
        review,
        systemFindings,
        acceptanceCriteria: contract.acceptanceCriteria.map((ac) => ({ id: ac.id, statement: ac.statement, proof: describeProof(ac.verification) })),
        maker: {
          noChange: maker.noChange,
          diffHash: maker.diffHash,
          cumulativeDiffEmpty: maker.cumulativeDiffEmpty,
          agentReport: maker.agentReport,
        },
        budgetExhausted: budgetExhausted(request.budget, usage),
        previous,
        environmentProblem: verification.environmentProblem ?? null,
      });
      previous = [...previous, report.record];
      state.lastVerdict = report.verdict;
      iteration.verdict = report.verdict;
      iteration.trigger = report.trigger;
      await recorder().recordVerdict.executeWithOptions(withSummary(label(`verdict ${report.verdict}`)), [{ loopId, sequence, report, warnings: gatePlan.warnings, progress: judgeProgress }]);

      if (report.verdict === 'PASS') return await deliver('PASSED', null);
      if (report.verdict === 'ITERATE') {
        directives = report.directives;
        const score = scoreOf(report, sequence, maker.checkpointCommit, maker.changedFiles);
        if (best && isWorse(score, best)) {
          await gitWork.backtrack.executeWithOptions(withSummary(label(`backtrack to #${best.sequence}`)), [
            { loopId, sequence, toCommit: best.checkpointCommit },
          ]);
          directives = [...report.directives, `${report.directives.length + 1}. ${recoveryBrief(score, best)}`];
          setupDue = true;
        } else {
          best = score;
        }
        continue;
      }

      escalations += 1;
      const escalationSequence = escalations;
      const systemBlockers = systemFindings.filter((f) => f.source === 'SYSTEM' && f.severity === 'BLOCKER' && f.validity === 'VALID').length;
      const decision = await awaitDecision(
        escalationSequence,
        report.trigger ?? 'UNKNOWN',
        () =>
          recorder().recordEscalation.executeWithOptions(withSummary(`escalation ${escalationSequence}: ${report.trigger}`), [
            { loopId, escalationSequence, sequence, report },
          ]),
        systemBlockers,
      );
      const effect = applyDecision(decision, contract);
      if (effect.action === 'END_REJECTED') return await end('REJECTED');
      if (effect.action === 'DELIVER_OVERRIDE') return await deliver('APPROVED_BY_HUMAN', decision.actor);

      contract = effect.contract;
      await freeze(state.contractVersion + 1, effect.reason);
      const carried: LoopResume = {
        contract,
        contractVersion: state.contractVersion,
        contractHash: state.contractHash!,
        sequence: state.sequence,
        escalations,
        directives: effect.guidance ? [...report.directives, `${report.directives.length + 1}. Human guidance: ${effect.guidance}`] : report.directives,
        gatePlan,
        usage,
        // After fixing the machine, a retry installs the dependencies again before the maker.
        setupDue: report.trigger === 'ENVIRONMENT' || setupDue,
      };
      // The iteration count restarts at 1 in a fresh run: history stays bounded however often a human steps in.
      // The new run starts with the Web UI's columns saying what is true now, not "AWAITING_DECISION".
      const resumed = makeContinueAsNewFunc<typeof engineeringLoop>({
        typedSearchAttributes: workflowInfo().typedSearchAttributes.updateCopy([
          { key: LoopStatusKey, value: 'RUNNING' },
          { key: LoopPhaseKey, value: 'CONTRACT' },
          { key: LoopIterationKey, value: 1 },
        ]),
      });
      // A refused signal still being recorded finishes in this run, not never.
      await condition(allHandlersFinished);
      await resumed({ loopId, request, resume: carried });
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    const status: LoopStatus = isCancellation(err) ? 'CANCELLED' : 'FAILED';
    const reason = isCancellation(err) ? 'cancelled' : rootCause(err);
    // Record the end even though the workflow scope is cancelled or failing.
    await CancellationScope.nonCancellable(() => transition(status, 'DONE', reason));
    throw err;
  }
}

/** A signal's decision as its sender named it (it may not be a valid decision at all). */
function describeSignal(raw: unknown): string {
  const fields = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const text = (value: unknown) => (typeof value === 'string' ? `"${value.slice(0, 100)}"` : 'none');
  return `decision signal (kind ${text(fields.kind)}, actor ${text(fields.actor)})`;
}

/** The Temporal UI's "current details": where the loop is and, when it waits, what a person must do. */
function currentDetails(state: LoopState): string {
  const where = `**${state.status}** · phase ${state.phase} · iteration ${state.roundIteration} of ${state.maxIterations}`;
  const verdict = state.lastVerdict ? ` · last verdict ${state.lastVerdict}` : '';
  const waiting = state.awaitingDecision
    ? `\n\nWaiting for a person: decide escalation #${state.awaitingDecision.escalationSequence} (approve, reject, retry or amend) in the inbox or with POST /v1/loops/${state.loopId}/decisions.`
    : '';
  const failed = state.failureReason ? `\n\nReason: ${state.failureReason.slice(0, 500)}` : '';
  return `${where}${verdict}${waiting}${failed}`;
}

/**
 * "Activity task failed" says nothing: the reason is at the end of the cause chain (an invalid
 * verification.json, a timeout), named with the activity it came from.
 */
function rootCause(err: unknown): string {
  let root = err;
  while (root instanceof Error && root.cause instanceof Error) root = root.cause;
  const message = root instanceof Error ? root.message : String(root);
  return err instanceof ActivityFailure && err.activityType ? `${err.activityType}: ${message}` : message;
}

/** A review that cannot be had (provider down, auth refused) escalates; it never crashes the loop. */
async function reviewOrFailure(run: () => Promise<{ outcome: ReviewOutcome; usage: Usage }>): Promise<{ outcome: ReviewOutcome; usage: Usage }> {
  try {
    return await run();
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    return { outcome: { status: 'FAILED', reason: cause }, usage: NO_USAGE };
  }
}

function verificationTimeout(gates: { timeoutSeconds: number }[], criteria: { verification: { type: string; timeoutSeconds?: number } }[]): string {
  const commandSeconds = criteria.reduce((sum, ac) => sum + (ac.verification.timeoutSeconds ?? 0), 0);
  return `${gates.reduce((sum, g) => sum + g.timeoutSeconds, 0) + commandSeconds + 120}s`;
}
