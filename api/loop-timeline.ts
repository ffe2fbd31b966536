import { verdictRuleOf, type StoredJudgeReport } from '../domain/verdict-explanation';
import type { PrismaClient } from '../store/db';
import type { FeedSource } from '../store/loop-feed';
import { timelineRows, type DueRows } from '../store/read-model';
import { loadLoop } from './load-loop';
import type { TimelineEvent, TimelineEventKind } from './timeline-schemas';

// A loop's audit timeline (docs/design.md §8.4), like a CI run's: phase transitions, contract versions, every
// command and model call, verdicts, escalations and decisions, in the order they happened. Read from
// the read model only; large texts (command output, reports) stay behind their own endpoints.

/** How much of an execution record's free-text detail the timeline shows. */
const DETAIL_CHARS = 500;

/** For events at the same millisecond: the order in which they are caused. */
const KIND_ORDER: Record<TimelineEventKind, number> = {
  phase: 0,
  contract: 1,
  command: 2,
  model_call: 3,
  verdict: 4,
  escalation: 5,
  refused_decision: 6,
  decision: 7,
  egress_refused: 2,
  waiting: 3,
};

export interface LoopTimeline {
  loopId: string;
  status: string;
  phase: string;
  events: TimelineEvent[];
}

/** A timeline event and the row it was made from (`<table>:<id>`), which the live stream orders by. */
export interface SourcedEvent {
  source: string;
  event: TimelineEvent;
}

/** The loop's timeline; 404 for an unknown loop. */
export async function loopTimeline(prisma: PrismaClient, loopId: string): Promise<LoopTimeline> {
  const loop = await loadLoop(prisma, loopId);
  const events = await timelineEvents(prisma, loopId);
  return { loopId: loop.id, status: loop.status, phase: loop.phase, events: events.map((e) => e.event) };
}

/**
 * Every event of the loop's timeline with its source row, in time order; with `due`, those of the due rows
 * and of the rows read beside them (store/read-model.ts, DueRows), each as the whole timeline has it.
 */
export async function timelineEvents(prisma: PrismaClient, loopId: string, due?: DueRows): Promise<SourcedEvent[]> {
  const [phases, contracts, evidence, executions, verdicts, escalations, waiting] = await timelineRows(
    prisma,
    loopId,
    due,
  );

  const events: SourcedEvent[] = [
    ...phaseEvents(phases),
    ...contracts.map((c) =>
      sourced('ContractVersion', c.id, {
        at: c.createdAt.toISOString(),
        kind: 'contract',
        iteration: null,
        title: `Contract v${c.version} frozen (${c.reason})`,
        durationMs: null,
        detail: { version: c.version, hash: c.hash, reason: c.reason },
      }),
    ),
    ...evidence.map((e) => {
      const counts = e.testCounts as { passed?: number; failed?: number; skipped?: number } | null;
      return sourced('Evidence', e.id, {
        at: (e.startTime ?? e.createdAt).toISOString(),
        kind: 'command',
        iteration: e.iteration?.sequence ?? null,
        title: `${e.gate}: ${e.status}${e.exitCode !== null ? ` (exit ${e.exitCode})` : ''}${counts ? ` · ${counts.passed ?? 0} passed, ${counts.failed ?? 0} failed` : ''}`,
        durationMs: e.startTime && e.endTime ? elapsed(e.startTime, e.endTime) : null,
        detail: {
          evidenceId: e.id,
          gate: e.gate,
          command: e.command,
          status: e.status,
          exitCode: e.exitCode,
          timeoutStatus: e.timeoutStatus,
          testCounts: e.testCounts,
          source: e.source,
          sourceDetail: e.sourceDetail,
          failureReason: e.failureReason,
          startTime: e.startTime?.toISOString() ?? null,
          endTime: e.endTime?.toISOString() ?? null,
        },
      });
    }),
    ...executions.map((x) => sourced('ExecutionRecord', x.id, executionEvent(x))),
    ...verdicts.map((v) => {
      const report = v.report as StoredJudgeReport;
      const { rule, recorded } = verdictRuleOf(report);
      return sourced('Verdict', v.id, {
        at: v.createdAt.toISOString(),
        kind: 'verdict',
        iteration: v.iteration.sequence,
        title: `Verdict ${v.verdict}${v.trigger ? ` (${v.trigger})` : ''} · rule ${rule}`,
        durationMs: null,
        detail: {
          verdict: v.verdict,
          trigger: v.trigger,
          rule,
          ruleRecorded: recorded,
          roundIteration: report.roundIteration ?? null,
          maxIterations: report.maxIterations ?? null,
          reasons: report.reasons ?? [],
          directives: v.directives,
        },
      });
    }),
    ...escalationEvents(escalations, verdicts),
    ...waitingEvents(loopId, waiting),
  ];
  events.sort(
    ({ event: a }, { event: b }) => Date.parse(a.at) - Date.parse(b.at) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind],
  );
  return events;
}

/**
 * While the loop's current step waits out an outage (store/loop-waiting.ts): what it waits for, since its
 * first attempt met it. Gone once the step gets through; its attempts stay as model calls.
 */
function waitingEvents(
  loopId: string,
  loop: { waitingFor: string | null; waitingSince: Date | null } | null,
): SourcedEvent[] {
  if (!loop?.waitingFor) return [];
  const since = (loop.waitingSince ?? new Date()).toISOString();
  return [
    sourced('LoopWaiting', loopId, {
      at: since,
      kind: 'waiting',
      iteration: null,
      title: `Waiting for ${loop.waitingFor}`,
      durationMs: null,
      detail: { reason: loop.waitingFor, since },
    }),
  ];
}

function sourced(table: FeedSource, id: string, event: TimelineEvent): SourcedEvent {
  return { source: `${table}:${id}`, event };
}

/**
 * One event per recorded transition, lasting until the next. Each iteration has exactly one MAKER
 * transition, so counting them from the loop's first (PREPARING) gives the iteration of the phases that
 * follow; SETUP and anything before the first maker belong to the loop. A loop recorded only in part
 * (it started before phase events existed) gets no iteration numbers rather than wrong ones.
 */
function phaseEvents(
  phases: Array<{
    id: string;
    status: string;
    phase: string;
    roundIteration: number;
    lastVerdict: string | null;
    failureReason: string | null;
    createdAt: Date;
  }>,
): SourcedEvent[] {
  const complete = phases[0]?.phase === 'PREPARING';
  let makers = 0;
  let current: number | null = null;
  return phases.map((p, index) => {
    if (p.phase === 'MAKER') {
      makers += 1;
      current = makers;
    } else if (p.phase === 'SETUP' || p.phase === 'PREPARING' || p.phase === 'CONTRACT') {
      current = null;
    }
    const next = phases[index + 1];
    return sourced('LoopEvent', p.id, {
      at: p.createdAt.toISOString(),
      kind: 'phase',
      iteration: complete ? current : null,
      title: p.status === 'RUNNING' || p.status === p.phase ? p.phase : `${p.phase} · ${p.status}`,
      durationMs: next ? elapsed(p.createdAt, next.createdAt) : null,
      detail: {
        phase: p.phase,
        status: p.status,
        roundIteration: p.roundIteration,
        lastVerdict: p.lastVerdict,
        failureReason: p.failureReason,
      },
    });
  });
}

function executionEvent(x: {
  role: string;
  kind: string;
  provider: string;
  model: string | null;
  responseId: string | null;
  requestId: string | null;
  pid: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  costUsd: number | null;
  latencyMs: number;
  outcome: string;
  detail: string | null;
  iterationSeq: number | null;
  createdAt: Date;
}): TimelineEvent {
  const detailText = x.detail && x.detail.length > DETAIL_CHARS ? `${x.detail.slice(0, DETAIL_CHARS)}…` : x.detail;
  // Refused decisions are recorded beside model calls (role "decision"): the workflow would not act on them.
  if (x.kind === 'DECISION' && x.outcome === 'REFUSED') {
    return {
      at: x.createdAt.toISOString(),
      kind: 'refused_decision',
      iteration: x.iterationSeq,
      title: `Decision refused (${x.provider})`,
      durationMs: null,
      detail: { channel: x.provider, reason: detailText },
    };
  }
  // The egress proxy's refusals (activities/egress-refusals.ts): the destination is the "provider".
  if (x.kind === 'EGRESS') {
    return {
      at: x.createdAt.toISOString(),
      kind: 'egress_refused',
      iteration: x.iterationSeq,
      title: `Egress refused: ${x.provider} (${x.role})`,
      durationMs: null,
      detail: { role: x.role, destination: x.provider, reason: detailText },
    };
  }
  const what = x.kind === 'MODEL_CALL' ? 'model call' : x.kind === 'AGENT_SESSION' ? 'agent session' : 'agent run';
  const tokens =
    x.promptTokens !== null || x.completionTokens !== null
      ? ` · ${(x.promptTokens ?? 0) + (x.completionTokens ?? 0)} tokens`
      : '';
  // Recorded when it ended: it began latencyMs earlier.
  const end = x.createdAt.getTime();
  return {
    at: new Date(end - Math.max(0, x.latencyMs)).toISOString(),
    kind: 'model_call',
    iteration: x.iterationSeq,
    title: `${x.role} ${what}: ${x.provider}${x.model ? ` ${x.model}` : ''} → ${x.outcome}${tokens}`,
    durationMs: Math.max(0, Math.round(x.latencyMs)),
    detail: {
      role: x.role,
      kind: x.kind,
      provider: x.provider,
      model: x.model,
      responseId: x.responseId,
      requestId: x.requestId,
      pid: x.pid,
      promptTokens: x.promptTokens,
      completionTokens: x.completionTokens,
      costUsd: x.costUsd,
      latencyMs: x.latencyMs,
      outcome: x.outcome,
      note: detailText,
    },
  };
}

/**
 * Escalations and their decisions. An escalation that follows a verdict belongs to that verdict's
 * iteration: the latest ESCALATE verdict with its trigger recorded before it and not claimed by an
 * earlier escalation. A contract approval, or a set-up failure before a maker, has none.
 */
function escalationEvents(
  escalations: Array<{
    id: string;
    sequence: number;
    trigger: string;
    status: string;
    reportId: string;
    createdAt: Date;
    decidedAt: Date | null;
    decisions: Array<{
      id: string;
      kind: string;
      actor: string;
      comment: string | null;
      guidance: string | null;
      createdAt: Date;
    }>;
  }>,
  verdicts: Array<{
    id: string;
    verdict: string;
    trigger: string | null;
    createdAt: Date;
    iteration: { sequence: number };
  }>,
): SourcedEvent[] {
  const claimed = new Set<string>();
  return escalations.flatMap((e) => {
    const verdict =
      e.trigger === 'CONTRACT_APPROVAL'
        ? undefined
        : verdicts
            .filter(
              (v) =>
                v.verdict === 'ESCALATE' && v.trigger === e.trigger && v.createdAt <= e.createdAt && !claimed.has(v.id),
            )
            .at(-1);
    if (verdict) claimed.add(verdict.id);
    const iteration = verdict?.iteration.sequence ?? null;
    const decision = e.decisions[0];
    return [
      sourced('Escalation', e.id, {
        at: e.createdAt.toISOString(),
        kind: 'escalation',
        iteration,
        title: `Escalation #${e.sequence}: ${e.trigger} (${e.status})`,
        durationMs: e.decidedAt ? elapsed(e.createdAt, e.decidedAt) : null,
        detail: {
          sequence: e.sequence,
          trigger: e.trigger,
          status: e.status,
          reportId: e.reportId,
          decidedAt: e.decidedAt?.toISOString() ?? null,
        },
      }),
      ...(decision
        ? [
            sourced('Decision', decision.id, {
              at: decision.createdAt.toISOString(),
              kind: 'decision',
              iteration,
              title: `Decision: ${decision.kind} by ${decision.actor}`,
              durationMs: null,
              detail: {
                escalationSequence: e.sequence,
                kind: decision.kind,
                actor: decision.actor,
                comment: decision.comment,
                guidance: decision.guidance,
              },
            }),
          ]
        : []),
    ];
  });
}

function elapsed(from: Date, to: Date): number {
  return Math.max(0, to.getTime() - from.getTime());
}
