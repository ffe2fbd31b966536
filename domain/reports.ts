import { describeDrift, type BaseDrift } from './base-drift';
import type { ContextImpact } from './context-impact';
import type { GateSummary } from './gates';
import type { EscalationTrigger, JudgeReport } from './judge';
import type { MakerRunOutcome } from './maker-outcome';
import { describeOperatorPolicy, type OperatorPolicy } from './operator-policy';

// Reports people read: the judge report of each verdict, the escalation report (docs/design.md §7.1) and the
// final report delivered on PASS or human approval (docs/design.md §9). Pure data in, Markdown out.

export type EscalationKind = EscalationTrigger | 'CONTRACT_APPROVAL';

export interface EscalationReport {
  trigger: EscalationKind;
  roundIteration: number;
  maxIterations: number;
  attempts: Array<{
    sequence: number;
    roundIteration: number;
    /** The first REPORTED_FILES of them; changedFileCount says how many there were. */
    changedFiles: string[];
    changedFileCount?: number;
    verdict: string;
    reasons: string[];
    /** How the maker's run ended and why (domain/maker-outcome.ts); absent from older reports. */
    maker?: MakerRunOutcome | null;
  }>;
  coreBlocker: string;
  openFindings: Array<{ findingId: string; title: string; severity: string; location: string }>;
  /**
   * The system's own findings that the maker gamed verification (docs/design.md §3.4), grouped by rule so a
   * person sees it at once. Absent from reports stored before it existed.
   */
  gaming?: Array<{ rule: string; findings: Array<{ findingId: string; location: string; hides: string }> }>;
  /**
   * A contract-approval escalation's reason: test names the base commit's tests answer to more than once,
   * each with the base tests (as the runner reports them) the contract may name instead.
   */
  ambiguousTests?: Array<{ acId: string; name: string; candidates: string[] }>;
  options: Array<{ decision: 'approve' | 'reject' | 'retry' | 'amend'; description: string }>;
  workspace: { branch: string; checkpointCommit: string; gates: Array<Pick<GateSummary, 'gate' | 'status'>> };
  /** How the loop's untrusted commands were confined (describeSandbox). */
  sandbox: string;
  /** The operator's ceilings in force when the report was written (OPERATOR_POLICY); absent from older reports. */
  operatorPolicy?: OperatorPolicy;
}

export interface FinalReport {
  outcome: 'PASSED' | 'APPROVED_BY_HUMAN';
  objective: string;
  contract: { version: number; hash: string };
  branch: string;
  baseCommit: string;
  checkpointCommit: string;
  commits: string[];
  reviewMode: string;
  judge: JudgeReport;
  approvedBy?: string;
  /** How the loop's untrusted commands were confined (describeSandbox). */
  sandbox: string;
  /** The gate plan's warnings (GatePlan.warnings), e.g. that there was no tests gate. */
  warnings?: string[];
  /** How much of what is known about the repository the change invalidates (context-impact.ts). */
  contextImpact?: ContextImpact;
  /** Whether the base moved between the loop's start and its delivery, and the change still merges (base-drift.ts). */
  baseDrift?: BaseDrift;
  /** The base moved before delivery: the change was replayed onto it (`baseCommit`) and verified there again. */
  replayed?: { fromBase: string; fromCheckpoint: string };
  /** Where the branch went (push, pull request), when the loop asked for delivery. */
  delivery?: {
    pushedBranch: string | null;
    pushedTo: string | null;
    pullRequestUrl: string | null;
    error: string | null;
  };
}

/** Every report says how the loop's commands ran; running unconfined is the operator's explicit choice. */
export function describeSandbox(mode: string | null): string {
  if (mode === 'bwrap') return 'bubblewrap (own namespaces, read-only system, workspace-only writes, unprivileged uid)';
  if (mode === 'none')
    return "NONE: the operator set SANDBOX=none, so this loop's maker, gates and agents ran unsandboxed, with the worker's own access";
  return 'not recorded';
}

/** How many of an attempt's changed files a report names: a sweeping change must not bury the report. */
export const REPORTED_FILES = 20;

function filesText(files: string[], count = files.length): string {
  if (count === 0) return '(no change)';
  return `${files.join(', ')}${count > files.length ? `, … and ${count - files.length} more` : ''}`;
}

const TRIGGER_TEXT: Record<EscalationReport['trigger'], string> = {
  MAX_ITERATIONS: 'the iteration limit was reached',
  NO_CHANGE: 'the maker produced no change',
  REPEATED_TAMPER: 'the maker tampered with verification or scope in two consecutive iterations',
  REPEATED_BLOCKING_SIGNATURE: 'the same blocking finding appeared in two consecutive iterations',
  PING_PONG_DIFF: 'the diff returned to the one of two iterations back',
  REPEATED_GATE_FAILURE: 'the same gate failure repeated',
  REVIEW_UNAVAILABLE: 'the review could not be completed',
  REVIEW_INCOMPLETE:
    'the change is too large to review whole (past the operator’s ceiling of files or bytes), and no part of it passes unreviewed',
  BUDGET_EXHAUSTED: 'the loop reached its budget',
  AGENT_CONTRADICTION: 'the maker reported contradictory requirements',
  AGENT_DESTRUCTIVE_OPERATION: 'the maker reported that the task needs a destructive operation',
  AGENT_IRREPRODUCIBLE_FAILURE: 'the maker reported a failure it cannot reproduce',
  ENVIRONMENT:
    'the environment is not usable: dependencies could not be installed, or a command could not start (fix the machine or the set-up, then retry)',
  BASE_DRIFT:
    'the base branch moved before delivery, and the change no longer merges onto it or fails verification there (approve delivers it as it is; retry sends the maker back onto the moved base)',
  MAJOR_CONTEXT_IMPACT:
    'the change passed, but its context impact is MAJOR (CI, workspace layout or build system) and delivery waits for a person to approve it',
  CONTRACT_APPROVAL: 'the contract needs a human approval before the maker starts',
};

export function describeTrigger(trigger: EscalationReport['trigger']): string {
  return TRIGGER_TEXT[trigger];
}

function table(headers: string[], rows: Array<Array<string | number | null>>): string {
  const cell = (v: string | number | null) =>
    String(v ?? '—')
      .replace(/\|/g, '\\|')
      .replace(/\n/g, ' ');
  if (rows.length === 0) return '_none_';
  return [
    `| ${headers.join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** A judge report, with the gate plan's warnings (e.g. no tests gate) under its heading. */
export function renderJudgeReport(r: JudgeReport, warnings: readonly string[] = []): string {
  const counts = (c: GateSummary['testCounts']) =>
    c ? `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped` : null;
  return [
    `## Judge report — ${r.verdict}${r.trigger ? ` (${r.trigger})` : ''}, iteration ${r.roundIteration} of ${r.maxIterations}`,
    '',
    ...(warnings.length ? [...warnings.map((w) => `**Warning: ${w}**`), ''] : []),
    ...r.reasons.map((reason) => `- ${reason}`),
    '',
    '### Gate audit',
    table(
      ['gate', 'status', 'exit code', 'timeout status', 'tests', 'evidence'],
      r.gateAudit.map((g) => [g.gate, g.status, g.exitCode, g.timeoutStatus, counts(g.testCounts), g.evidenceId]),
    ),
    '',
    '### Acceptance criteria',
    table(
      ['AC', 'statement', 'status', 'evidence'],
      r.acCompliance.map((a) => [a.id, a.statement, a.status, a.evidenceIds.join(', ')]),
    ),
    '',
    '### Findings triage',
    table(
      ['finding', 'title', 'severity', 'validity', 'outcome'],
      r.findingTriage.map((f) => [f.findingId, f.title, f.severity, f.validity, f.outcome]),
    ),
    '',
    '### Directives',
    r.directives.length ? r.directives.join('\n') : '_none_',
  ].join('\n');
}

export function renderEscalationReport(r: EscalationReport): string {
  return [
    `# Escalation — ${r.trigger}`,
    '',
    `## 1. Trigger`,
    `Escalated at iteration ${r.roundIteration} of ${r.maxIterations} because ${describeTrigger(r.trigger)}.`,
    '',
    '## 2. What each iteration tried',
    table(
      ['#', 'K', 'changed files', 'maker', 'verdict', 'why'],
      r.attempts.map((a) => [
        a.sequence,
        a.roundIteration,
        filesText(a.changedFiles, a.changedFileCount),
        a.maker?.explanation ?? null,
        a.verdict,
        a.reasons.join('; '),
      ]),
    ),
    '',
    '## 3. Core blocker',
    r.coreBlocker,
    '',
    '## 4. Open findings',
    ...gamingSection(r.gaming ?? []),
    table(
      ['finding', 'title', 'severity', 'location'],
      r.openFindings.map((f) => [f.findingId, f.title, f.severity, f.location]),
    ),
    '',
    '## 5. Options',
    ...r.options.map((o, i) => `${i + 1}. **${o.decision}** — ${o.description}`),
    '',
    '## 6. Workspace',
    `- branch: \`${r.workspace.branch}\``,
    `- checkpoint commit: \`${r.workspace.checkpointCommit}\``,
    `- gates: ${r.workspace.gates.map((g) => `${g.gate} ${g.status}`).join(', ') || 'none run'}`,
    `- sandbox: ${r.sandbox}`,
    ...(r.operatorPolicy ? [`- operator policy: ${describeOperatorPolicy(r.operatorPolicy)}`] : []),
  ].join('\n');
}

function gamingSection(groups: NonNullable<EscalationReport['gaming']>): string[] {
  if (groups.length === 0) return [];
  const count = groups.reduce((n, g) => n + g.findings.length, 0);
  return [
    `### The maker gamed verification: ${count} system finding(s) under ${groups.map((g) => g.rule).join(', ')}`,
    table(
      ['rule', 'finding', 'location', 'what it would have hidden'],
      groups.flatMap((g) => g.findings.map((f) => [g.rule, f.findingId, f.location, f.hides])),
    ),
    '',
    '### All open findings',
  ];
}

export function renderFinalReport(r: FinalReport): string {
  const d = r.delivery;
  return [
    `# ${r.outcome === 'PASSED' ? 'Delivered — PASS' : `Delivered — approved by ${r.approvedBy ?? 'a human'} (human override)`}`,
    '',
    `**Objective:** ${r.objective}`,
    '',
    `- branch: \`${r.branch}\` (base \`${r.baseCommit}\`, checkpoint \`${r.checkpointCommit}\`)`,
    ...(r.replayed
      ? [
          `- verified against base \`${r.baseCommit}\`: the base moved after the loop started from \`${r.replayed.fromBase}\`, so the change (checkpoint \`${r.replayed.fromCheckpoint}\`) was replayed onto it and verified again`,
        ]
      : []),
    ...(r.outcome === 'PASSED' && r.approvedBy ? [`- delivery approved by ${r.approvedBy}`] : []),
    `- commits: ${r.commits.map((c) => `\`${c}\``).join(', ') || 'none'}`,
    `- contract: version ${r.contract.version}, hash \`${r.contract.hash}\``,
    `- review: ${r.reviewMode}`,
    `- sandbox: ${r.sandbox}`,
    ...(r.baseDrift ? [`- base: ${describeDrift(r.baseDrift)}`] : []),
    ...(d
      ? [
          `- pushed: ${d.pushedBranch ? `\`${d.pushedBranch}\` to ${d.pushedTo}` : 'no'}`,
          ...(d.pullRequestUrl ? [`- pull request: ${d.pullRequestUrl}`] : []),
          ...(d.error ? [`- delivery error: ${d.error}`] : []),
        ]
      : []),
    '',
    '## Merge request description',
    '',
    renderMergeRequestDescription(r),
    '',
    renderJudgeReport(r.judge, r.warnings),
  ].join('\n');
}

/** The final report's merge request section: the body of the pull/merge request delivery opens. */
export function renderMergeRequestDescription(r: FinalReport): string {
  const accepted = r.judge.findingTriage.filter((f) => f.outcome === 'ACCEPTED_TRADE_OFF');
  const dismissed = r.judge.findingTriage.filter((f) => f.outcome === 'DISMISSED');
  return [
    '### Definition of Done',
    table(
      ['AC', 'statement', 'status', 'evidence'],
      r.judge.acCompliance.map((a) => [a.id, a.statement, a.status, a.evidenceIds.join(', ')]),
    ),
    '',
    '### Accepted trade-offs',
    table(
      ['finding', 'title', 'severity'],
      accepted.map((f) => [f.findingId, f.title, f.severity]),
    ),
    '',
    '### Dismissed findings',
    table(
      ['finding', 'title', 'severity'],
      dismissed.map((f) => [f.findingId, f.title, f.severity]),
    ),
    ...(r.contextImpact
      ? ['', `### Context impact: ${r.contextImpact.level}`, ...r.contextImpact.reasons.map((reason) => `- ${reason}`)]
      : []),
    ...(r.baseDrift ? ['', '### Base', describeDrift(r.baseDrift)] : []),
    ...(r.replayed
      ? [
          `Verified against \`${r.baseCommit}\`: the base moved after the loop started from \`${r.replayed.fromBase}\`, and the change was replayed onto it and verified again.`,
        ]
      : []),
  ].join('\n');
}
