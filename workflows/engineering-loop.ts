import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { LoopActivities } from '../activities';
import { applyDecision, decisionSchema, type Decision } from '../domain/decision';
import { computeVerdict, type IterationRecord, type JudgeReport, type ReviewOutcome } from '../domain/judge';
import { describeIssues } from '../domain/ledger';
import { loopInputSchema, type LoopInput } from '../domain/loop-request';
import type { LoopPhase, LoopState, LoopStatus } from '../domain/loop-state';
import { describeProof } from '../domain/proof';
import { decisionSignal, loopStateQuery } from './messages';
import { LoopIterationKey, LoopPhaseKey, LoopStatusKey, LoopVerdictKey } from './search-attributes';

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 };

/** Short bookkeeping activities: writes to Postgres and git set-up. */
const bookkeeping = proxyActivities<LoopActivities>({
  startToCloseTimeout: '2m',
  retry: { ...retry, maximumAttempts: 10 },
});

/** Activities that run commands or call models: heartbeat so a dead worker or a cancel is noticed in seconds. */
const HEARTBEAT_TIMEOUT = '20s';
const work = proxyActivities<LoopActivities>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  cancellationType: 'WAIT_CANCELLATION_COMPLETED',
  retry,
});

export interface LoopOutcome {
  status: LoopStatus;
  iterations: number;
  reportId: string | null;
}

export async function engineeringLoop(rawInput: LoopInput): Promise<LoopOutcome> {
  const parsed = loopInputSchema.safeParse(rawInput);
  if (!parsed.success) {
    throw ApplicationFailure.create({
      type: 'InvalidLoopInput',
      message: `invalid loop input: ${describeIssues(parsed.error.issues).join('; ')}`,
      nonRetryable: true,
    });
  }
  const { loopId, request } = parsed.data;
  const state: LoopState = {
    loopId,
    status: 'RUNNING',
    phase: 'PREPARING',
    contractVersion: 0,
    contractHash: null,
    roundIteration: 0,
    maxIterations: request.maxIterations,
    sequence: 0,
    lastVerdict: null,
    awaitingDecision: null,
    iterations: [],
    failureReason: null,
  };
  let pendingDecision: Decision | undefined;

  setHandler(loopStateQuery, () => state);
  setHandler(decisionSignal, (raw) => {
    const decision = decisionSchema.safeParse(raw);
    if (!decision.success) {
      log.warn('ignored an invalid decision', { issues: describeIssues(decision.error.issues) });
    } else if (!state.awaitingDecision || pendingDecision) {
      log.warn('ignored a decision: the loop is not awaiting one', { status: state.status });
    } else {
      pendingDecision = decision.data;
    }
  });

  /** Moves the loop on, in the query state, the Web UI's search attributes and the Postgres read model. */
  async function transition(status: LoopStatus, phase: LoopPhase, failureReason?: string): Promise<void> {
    state.status = status;
    state.phase = phase;
    if (failureReason) state.failureReason = failureReason;
    upsertSearchAttributes([
      { key: LoopStatusKey, value: status },
      { key: LoopPhaseKey, value: phase },
      { key: LoopIterationKey, value: state.roundIteration },
      ...(state.lastVerdict ? [{ key: LoopVerdictKey, value: state.lastVerdict }] : []),
    ]);
    await bookkeeping.recordProgress({
      loopId,
      status,
      phase,
      roundIteration: state.roundIteration,
      lastVerdict: state.lastVerdict,
      failureReason: failureReason ?? null,
    });
  }

  const label = (phase: string) => `${phase} · iteration ${state.roundIteration} of ${state.maxIterations} (#${state.sequence})`;
  const withSummary = (summary: string, extra: ActivityOptions = {}): ActivityOptions => ({ summary, ...extra });

  try {
    await transition('RUNNING', 'PREPARING');
    const { gatePlan } = await bookkeeping.prepareWorkspace.executeWithOptions(withSummary('prepare workspace', { startToCloseTimeout: '10m' }), [
      { loopId, repository: request.repository, contractGates: request.gates },
    ]);

    await transition('RUNNING', 'CONTRACT');
    let contract = request.contract;
    let frozen = await bookkeeping.freezeContract.executeWithOptions(withSummary('freeze contract v1'), [
      { loopId, version: 1, contract, reason: 'submitted' },
    ]);
    state.contractVersion = frozen.version;
    state.contractHash = frozen.hash;

    let directives: string[] = [];
    let previous: IterationRecord[] = [];
    let escalations = 0;

    for (;;) {
      state.sequence += 1;
      state.roundIteration += 1;
      const sequence = state.sequence;
      state.iterations.push({
        sequence,
        roundIteration: state.roundIteration,
        contractVersion: frozen.version,
        checkpointCommit: null,
        verdict: null,
        trigger: null,
      });
      const iteration = state.iterations[state.iterations.length - 1]!;

      await transition('RUNNING', 'MAKER');
      const maker = await work.runMaker.executeWithOptions(
        withSummary(label('maker'), { startToCloseTimeout: `${request.maker.timeoutSeconds + 120}s` }),
        [
          {
            loopId,
            sequence,
            roundIteration: state.roundIteration,
            maxIterations: state.maxIterations,
            contractVersion: frozen.version,
            directives,
            maker: request.maker,
          },
        ],
      );
      iteration.checkpointCommit = maker.checkpointCommit;

      await transition('RUNNING', 'VERIFY');
      const systemFindings = await bookkeeping.inspectChanges.executeWithOptions(withSummary(label('tamper and scope check')), [
        { loopId, sequence, contractVersion: frozen.version, gates: gatePlan.gates },
      ]);
      const verification = await work.runVerification.executeWithOptions(
        withSummary(label('verify'), { startToCloseTimeout: verificationTimeout(gatePlan.gates, contract.acceptanceCriteria) }),
        [{ loopId, sequence, contractVersion: frozen.version, gates: gatePlan.gates }],
      );

      let review: ReviewOutcome;
      if (verification.gates.some((g) => g.status === 'FAILED')) {
        review = { status: 'SKIPPED', reason: 'a configured gate failed' };
      } else {
        await transition('RUNNING', 'REVIEW');
        review = await reviewOrFailure(() =>
          work.runReview.executeWithOptions(withSummary(label('review')), [
            {
              loopId,
              sequence,
              contractVersion: frozen.version,
              model: request.reviewer.model ?? null,
              priorSignatures: [...new Set(previous.flatMap((p) => p.blockingSignatures))],
            },
          ]),
        );
      }

      await transition('RUNNING', 'JUDGE');
      const report: JudgeReport = computeVerdict({
        roundIteration: state.roundIteration,
        maxIterations: state.maxIterations,
        gates: verification.gates,
        acceptanceChecks: verification.acceptanceChecks,
        review,
        systemFindings,
        acceptanceCriteria: contract.acceptanceCriteria.map((ac) => ({ id: ac.id, statement: ac.statement, proof: describeProof(ac.verification) })),
        maker: { noChange: maker.noChange, diffHash: maker.diffHash, cumulativeDiffEmpty: maker.cumulativeDiffEmpty },
        previous,
      });
      previous = [...previous, report.record];
      state.lastVerdict = report.verdict;
      iteration.verdict = report.verdict;
      iteration.trigger = report.trigger;
      await bookkeeping.recordVerdict.executeWithOptions(withSummary(label(`verdict ${report.verdict}`)), [{ loopId, sequence, report }]);

      if (report.verdict === 'PASS') {
        const delivered = await bookkeeping.deliver.executeWithOptions(withSummary('deliver'), [
          { loopId, sequence, outcome: 'PASSED', approvedBy: null },
        ]);
        await transition('PASSED', 'DONE');
        return { status: 'PASSED', iterations: sequence, reportId: delivered.reportId };
      }

      if (report.verdict === 'ITERATE') {
        directives = report.directives;
        continue;
      }

      escalations += 1;
      // Accept decisions from here on: the API may see the escalation row before recordEscalation returns.
      state.awaitingDecision = { escalationSequence: escalations, trigger: report.trigger ?? 'UNKNOWN' };
      await bookkeeping.recordEscalation.executeWithOptions(withSummary(`escalation ${escalations}: ${report.trigger}`), [
        { loopId, escalationSequence: escalations, sequence, report },
      ]);
      await transition('AWAITING_DECISION', 'AWAITING_DECISION');
      await condition(() => pendingDecision !== undefined);
      const decision = pendingDecision!;
      pendingDecision = undefined;
      state.awaitingDecision = null;
      await bookkeeping.recordDecision.executeWithOptions(withSummary(`decision: ${decision.kind}`), [
        { loopId, escalationSequence: escalations, decision },
      ]);

      const effect = applyDecision(decision, contract);
      if (effect.action === 'END_REJECTED') {
        await transition('REJECTED', 'DONE');
        return { status: 'REJECTED', iterations: sequence, reportId: null };
      }
      if (effect.action === 'DELIVER_OVERRIDE') {
        const delivered = await bookkeeping.deliver.executeWithOptions(withSummary('deliver (human override)'), [
          { loopId, sequence, outcome: 'APPROVED_BY_HUMAN', approvedBy: decision.actor },
        ]);
        await transition('APPROVED', 'DONE');
        return { status: 'APPROVED', iterations: sequence, reportId: delivered.reportId };
      }
      contract = effect.contract;
      frozen = await bookkeeping.freezeContract.executeWithOptions(withSummary(`freeze contract v${frozen.version + 1}`), [
        { loopId, version: frozen.version + 1, contract, reason: effect.reason },
      ]);
      state.contractVersion = frozen.version;
      state.contractHash = frozen.hash;
      state.roundIteration = 0;
      previous = [];
      directives = [...report.directives, `${report.directives.length + 1}. ${contract.constraints.at(-1)}`];
    }
  } catch (err) {
    const status: LoopStatus = isCancellation(err) ? 'CANCELLED' : 'FAILED';
    const reason = isCancellation(err) ? 'cancelled' : err instanceof Error ? err.message : String(err);
    // Record the end even though the workflow scope is cancelled or failing.
    await CancellationScope.nonCancellable(() => transition(status, 'DONE', reason));
    throw err;
  }
}

/** A review that cannot be had (provider down, ledger invalid after repairs) escalates; it never crashes the loop. */
async function reviewOrFailure(run: () => Promise<ReviewOutcome>): Promise<ReviewOutcome> {
  try {
    return await run();
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    return { status: 'FAILED', reason: cause };
  }
}

function verificationTimeout(gates: { timeoutSeconds: number }[], criteria: { verification: { type: string; timeoutSeconds?: number } }[]): string {
  const commandSeconds = criteria.reduce((sum, ac) => sum + (ac.verification.timeoutSeconds ?? 0), 0);
  return `${gates.reduce((sum, g) => sum + g.timeoutSeconds, 0) + commandSeconds + 120}s`;
}
