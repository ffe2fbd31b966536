import type { AmbiguousTest } from './verification/acceptance-tests';
import type { Decision } from '../domain/decision';
import type { JudgeReport } from '../domain/judge';
import { RULE_HIDES } from '../analysis/tamper/types';
import {
  describeSandbox,
  renderEscalationReport,
  renderJudgeReport,
  REPORTED_FILES,
  type EscalationReport,
} from '../domain/reports';
import { describeProof } from '../domain/proof';
import { loadContract } from './contract';
import { observeDecision, observeVerdict } from '../telemetry/loop-metrics';
import type { ActivityDeps } from './deps';
import { closeWithDecision, escalationAt, openEscalation } from '../store/escalations';
import { blockingFindings } from '../store/findings';
import { loopById, loopWithAttempts } from '../store/loops';
import { upsertVerdict } from '../store/verdicts';
import { makerRunRecords } from '../store/execution-records';
import { makerOutcomesBySequence } from '../domain/maker-outcome';

// Audit-trail writes for verdicts, escalations and decisions. Each is idempotent on its natural key.

/** `warnings`: the gate plan's, for the report. */
export async function recordVerdict(
  deps: ActivityDeps,
  input: { loopId: string; sequence: number; report: JudgeReport; warnings: string[] },
): Promise<void> {
  const { verdict, trigger, directives } = input.report;
  const markdown = renderJudgeReport(input.report, input.warnings);
  const written = await upsertVerdict(deps.prisma, {
    loopId: input.loopId,
    sequence: input.sequence,
    verdict,
    trigger,
    directives,
    report: input.report,
    markdown,
  });
  if (!written)
    throw new Error(`loop ${input.loopId} has no iteration ${input.sequence}: its verdict cannot be recorded`);
  // Counted once per iteration: only by the write that created the verdict.
  if (written.created) observeVerdict(verdict, trigger);
}

export interface EscalationInput {
  loopId: string;
  escalationSequence: number;
  sequence: number;
  report: JudgeReport;
}

/** Stores the six-part escalation report (docs/design.md §7.1) and opens the escalation. */
export async function recordEscalation(
  deps: ActivityDeps,
  input: EscalationInput,
): Promise<{ escalationId: string; reportId: string }> {
  const loop = await loopWithAttempts(deps.prisma, input.loopId);
  // No iteration yet when the maker's workspace could not be set up (ENVIRONMENT before the first maker).
  const current = loop.iterations.find((i) => i.sequence === input.sequence) ?? null;
  const blocking = current ? await blockingFindings(deps.prisma, current.id) : [];
  const checkpoint = current?.checkpointCommit ?? loop.baseCommit ?? '';
  const trigger = input.report.trigger ?? 'MAX_ITERATIONS';
  const makerRuns = makerOutcomesBySequence(await makerRunRecords(deps.prisma, input.loopId));
  // A maker that produced nothing: why comes first, not the gates it left failing.
  const makerBlocker = current?.noChange ? makerRuns.get(current.sequence) : undefined;
  const report: EscalationReport = {
    trigger,
    roundIteration: input.report.roundIteration,
    maxIterations: input.report.maxIterations,
    attempts: loop.iterations.map((i) => ({
      sequence: i.sequence,
      roundIteration: i.roundIteration,
      ...reportedFiles(Array.isArray(i.changedFiles) ? (i.changedFiles as string[]) : []),
      verdict: i.verdict?.verdict ?? 'NONE',
      reasons: ((i.verdict?.report as { reasons?: string[] } | undefined)?.reasons ?? []).slice(0, 5),
      maker: makerRuns.get(i.sequence) ?? null,
    })),
    coreBlocker: [
      ...(makerBlocker ? [`The maker changed nothing: ${makerBlocker.explanation}`] : []),
      input.report.reasons.join('; '),
      ...input.report.directives,
    ].join('\n'),
    openFindings: blocking.map((f) => ({
      findingId: f.findingId,
      title: f.title,
      severity: f.severity,
      location: locationOf(f.location),
    })),
    gaming: gamingGroups(blocking),
    options: [
      {
        decision: 'retry',
        description:
          'send the maker back with guidance that resolves the core blocker (becomes a contract constraint; the iteration count restarts)',
      },
      input.report.gateAudit.length === 0 && input.report.trigger === 'ENVIRONMENT'
        ? {
            decision: 'approve',
            description: 'go on without a working set-up (the maker starts; gates may fail for the same reason)',
          }
        : {
            decision: 'approve',
            description: `accept checkpoint ${checkpoint.slice(0, 12)} as it is, recorded as a human override`,
          },
      {
        decision: 'amend',
        description: 'change the contract (a new version) and send the maker back; the iteration count restarts',
      },
      { decision: 'reject', description: 'stop the loop; the branch is kept for inspection' },
    ],
    workspace: {
      branch: loop.branch ?? '',
      checkpointCommit: checkpoint,
      gates: input.report.gateAudit.map((g) => ({ gate: g.gate, status: g.status })),
    },
    sandbox: describeSandbox(loop.sandbox),
    operatorPolicy: deps.config.operatorPolicy,
  };
  return storeEscalation(deps, input.loopId, input.escalationSequence, report);
}

function locationOf(location: unknown): string {
  const loc = location as { file: string; startLine: number; endLine: number };
  return `${loc.file}:${loc.startLine}-${loc.endLine}`;
}

/** Blocking system findings by rule, in the order the rules first fired. */
function gamingGroups(
  findings: Array<{ source: string; rule: string | null; findingId: string; location: unknown }>,
): EscalationReport['gaming'] {
  const groups = new Map<string, NonNullable<EscalationReport['gaming']>[number]['findings']>();
  for (const f of findings) {
    if (f.source !== 'SYSTEM' || !f.rule || !(f.rule in RULE_HIDES)) continue;
    const group = groups.get(f.rule) ?? [];
    group.push({
      findingId: f.findingId,
      location: locationOf(f.location),
      hides: RULE_HIDES[f.rule as keyof typeof RULE_HIDES],
    });
    groups.set(f.rule, group);
  }
  return [...groups].map(([rule, list]) => ({ rule, findings: list }));
}

/**
 * Opens the contract-approval escalation: the maker waits until a human approves the frozen contract — or,
 * with `ambiguousTests`, until the contract names one of the base tests its test names answer to.
 */
export async function recordContractApproval(
  deps: ActivityDeps,
  input: { loopId: string; escalationSequence: number; contractVersion: number; ambiguousTests?: AmbiguousTest[] },
): Promise<{ escalationId: string; reportId: string }> {
  const loop = await loopById(deps.prisma, input.loopId);
  const { contract, hash, version } = await loadContract(deps, input.loopId, input.contractVersion);
  const ambiguous = input.ambiguousTests ?? [];
  const report: EscalationReport = {
    trigger: 'CONTRACT_APPROVAL',
    roundIteration: 0,
    maxIterations: loop.maxIterations,
    attempts: [],
    coreBlocker: [
      ambiguous.length
        ? `Contract v${version} (hash ${hash}) names tests the base commit has more than once: no test proves them until the contract names one in full.`
        : `Contract v${version} (hash ${hash}) must be approved before the maker starts.`,
      ...ambiguous.map(
        (a) =>
          `${a.acId} names "${a.name}", which ${a.candidates.length} base tests answer to:\n${a.candidates.map((c) => `- ${c}`).join('\n')}`,
      ),
      `Objective: ${contract.objective}`,
      ...contract.acceptanceCriteria.map(
        (ac) => `${ac.id}: ${ac.statement} — proven by ${describeProof(ac.verification)}`,
      ),
    ].join('\n'),
    openFindings: [],
    options: ambiguous.length
      ? [
          { decision: 'amend', description: 'name one of the candidates in full (a new contract version)' },
          { decision: 'approve', description: 'start the maker anyway: the ambiguous criteria cannot be proven' },
          { decision: 'reject', description: 'do not run this task' },
        ]
      : [
          { decision: 'approve', description: 'start the maker on this contract' },
          { decision: 'amend', description: 'change contract fields first (a new contract version)' },
          { decision: 'reject', description: 'do not run this task' },
        ],
    ...(ambiguous.length ? { ambiguousTests: ambiguous } : {}),
    workspace: { branch: loop.branch ?? '', checkpointCommit: loop.baseCommit ?? '', gates: [] },
    sandbox: describeSandbox(loop.sandbox),
    operatorPolicy: deps.config.operatorPolicy,
  };
  return storeEscalation(deps, input.loopId, input.escalationSequence, report);
}

function storeEscalation(
  deps: ActivityDeps,
  loopId: string,
  sequence: number,
  report: EscalationReport,
): Promise<{ escalationId: string; reportId: string }> {
  return openEscalation(
    deps.prisma,
    { loopId, sequence, trigger: report.trigger },
    { body: report as object, markdown: renderEscalationReport(report) },
  );
}

/** Records who decided what on an escalation, and closes it. */
export async function recordDecision(
  deps: ActivityDeps,
  input: { loopId: string; escalationSequence: number; decision: Decision },
): Promise<void> {
  const escalation = await escalationAt(deps.prisma, input.loopId, input.escalationSequence);
  const d = input.decision;
  const decidedAt = new Date();
  await closeWithDecision(
    deps.prisma,
    escalation.id,
    {
      loopId: input.loopId,
      kind: d.kind,
      guidance: d.kind === 'retry' ? d.guidance : d.kind === 'amend' ? JSON.stringify(d.contract) : null,
      actor: d.actor,
      comment: d.comment ?? null,
    },
    decidedAt,
  );
  // Once per escalation: a retried activity finds it decided already.
  if (!escalation.decidedAt) observeDecision(d.kind, escalation.trigger, escalation.createdAt, decidedAt);
}

function reportedFiles(files: string[]): { changedFiles: string[]; changedFileCount: number } {
  return { changedFiles: files.slice(0, REPORTED_FILES), changedFileCount: files.length };
}
