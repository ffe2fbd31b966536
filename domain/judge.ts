import type { GateSummary } from './gates';
import { isBlocking, type FindingSummary } from './ledger';

// The judge (docs/design.md §6): a pure, deterministic policy. Only it can PASS.

export type Verdict = 'PASS' | 'ITERATE' | 'ESCALATE';

export const ESCALATION_TRIGGERS = [
  'MAX_ITERATIONS',
  'NO_CHANGE',
  'REPEATED_TAMPER',
  'REPEATED_BLOCKING_SIGNATURE',
  'PING_PONG_DIFF',
  'REPEATED_GATE_FAILURE',
  'REVIEW_UNAVAILABLE',
  'REVIEW_INCOMPLETE',
  'BUDGET_EXHAUSTED',
  'AGENT_CONTRADICTION',
  'AGENT_DESTRUCTIVE_OPERATION',
  'AGENT_IRREPRODUCIBLE_FAILURE',
  'ENVIRONMENT',
  /** The base moved before delivery and the change no longer merges onto it, or fails verification there. */
  'BASE_DRIFT',
  /** The change's context impact is MAJOR and the request or the operator wants a person to approve it. */
  'MAJOR_CONTEXT_IMPACT',
] as const;
export type EscalationTrigger = (typeof ESCALATION_TRIGGERS)[number];

/**
 * Which branch of the policy decided a verdict: a stable name for "the rule that fired" (stored with each
 * verdict). An escalation that overrides an ITERATE names its trigger; the reasons keep the rule before it.
 */
export const VERDICT_RULES = [
  /** Rule 0: dependencies could not be installed, or a gate could not start. */
  'ENVIRONMENT',
  /** Rule 1: a configured gate failed. */
  'GATES_FAILED',
  /** Rule 2: VALID BLOCKER/HIGH findings. */
  'BLOCKING_FINDINGS',
  /** No PASS without a review, and the review could not be had. */
  'REVIEW_UNAVAILABLE',
  /** No PASS without a review of every changed file, and the change is past the review's ceiling. */
  'REVIEW_INCOMPLETE',
  /** Rule 3: an acceptance criterion without passing evidence. */
  'ACCEPTANCE_UNPROVEN',
  /** Everything passes, but the branch has no change against the base commit. */
  'EMPTY_DIFF',
  /** Rule 4: PASS. */
  'ALL_CLEAR',
  // An ITERATE turned into ESCALATE (docs/design.md §6.2), in the order they are checked.
  'NO_CHANGE',
  'MAX_ITERATIONS',
  'REPEATED_TAMPER',
  'REPEATED_BLOCKING_SIGNATURE',
  'PING_PONG_DIFF',
  'REPEATED_GATE_FAILURE',
  /** Anything but a PASS once the budget is spent. */
  'BUDGET_EXHAUSTED',
  /** The agent asked for a human. */
  'AGENT_CONTRADICTION',
  'AGENT_DESTRUCTIVE_OPERATION',
  'AGENT_IRREPRODUCIBLE_FAILURE',
  // Raised after a PASS, on the change's way to delivery (workflows/delivery.ts), not by the judge.
  'BASE_DRIFT',
  'MAJOR_CONTEXT_IMPACT',
] as const;
export type VerdictRule = (typeof VERDICT_RULES)[number];

export type ReviewOutcome =
  | { status: 'COMPLETED'; findings: FindingSummary[]; responseIds: string[]; coverage?: ReviewCoverage }
  | { status: 'SKIPPED'; reason: string }
  | { status: 'FAILED'; reason: string }
  /** The change is past the review's ceiling (domain/review-scope.ts): `reason` names what was not reviewed. */
  | { status: 'INCOMPLETE'; reason: string };

/** How a completed review covered the change: its parts, and the files a named rule left out of it. */
export interface ReviewCoverage {
  parts: number;
  excluded: Array<{ rule: string; files: number; sample: string[] }>;
}

/** What an agent can report instead of (or besides) doing the work: each goes to a human. */
export const AGENT_REPORT_KINDS = ['CONTRADICTION', 'DESTRUCTIVE_OPERATION', 'IRREPRODUCIBLE_FAILURE'] as const;
export interface AgentReport {
  kind: (typeof AGENT_REPORT_KINDS)[number];
  reason: string;
}

export interface AcceptanceCheckSummary {
  acId: string;
  status: 'PASSED' | 'FAILED';
  evidenceId: string;
}

/** What the judge remembers of an earlier iteration of the same round. */
export interface IterationRecord {
  roundIteration: number;
  diffHash: string;
  blockingSignatures: string[];
  /** Signatures of tamper/scope findings the system raised (docs/design.md §3.4). */
  tamperSignatures: string[];
  failureSignature: string | null;
}

export interface JudgeInput {
  roundIteration: number;
  maxIterations: number;
  gates: GateSummary[];
  acceptanceChecks: AcceptanceCheckSummary[];
  review: ReviewOutcome;
  /** Tamper and scope violations found in the diff by the system itself: always VALID BLOCKER. */
  systemFindings: FindingSummary[];
  acceptanceCriteria: { id: string; statement: string; proof: string }[];
  maker: { noChange: boolean; diffHash: string; cumulativeDiffEmpty: boolean; agentReport: AgentReport | null };
  /** Why the loop's budget is exhausted, or null while within it. */
  budgetExhausted: string | null;
  /** Earlier iterations of this round, oldest first. */
  previous: IterationRecord[];
  /** Why the verification checkout's set-up failed (no gate ran), with the output's tail; null when it passed. */
  environmentProblem?: string | null;
}

export interface JudgeReport {
  verdict: Verdict;
  trigger: EscalationTrigger | null;
  /** The rule that decided the verdict. Verdicts stored before it existed lack it (see verdictRuleOf). */
  rule: VerdictRule;
  roundIteration: number;
  maxIterations: number;
  /** Why the verdict is what it is, in the order the rules fired. */
  reasons: string[];
  gateAudit: Array<
    Pick<GateSummary, 'gate' | 'status' | 'exitCode' | 'timeoutStatus' | 'testCounts' | 'evidenceId' | 'failureReason'>
  >;
  acCompliance: Array<{ id: string; statement: string; status: 'PROVEN' | 'NOT_PROVEN'; evidenceIds: string[] }>;
  findingTriage: Array<{
    findingId: string;
    title: string;
    severity: FindingSummary['severity'];
    validity: FindingSummary['validity'];
    outcome: 'BLOCKING' | 'ACCEPTED_TRADE_OFF' | 'DISMISSED';
  }>;
  directives: string[];
  /** This iteration as the judge will remember it next time. */
  record: IterationRecord;
}

export function computeVerdict(input: JudgeInput): JudgeReport {
  const findings = [...input.systemFindings, ...(input.review.status === 'COMPLETED' ? input.review.findings : [])];
  const blocking = findings.filter(isBlocking);
  const tampering = input.systemFindings.filter(isBlocking);
  const failedGates = input.gates.filter((g) => g.status === 'FAILED');
  const acCompliance = acceptanceCompliance(input);
  const unproven = acCompliance.filter((ac) => ac.status === 'NOT_PROVEN');
  const record: IterationRecord = {
    roundIteration: input.roundIteration,
    diffHash: input.maker.diffHash,
    blockingSignatures: [...new Set(blocking.map((f) => f.signature))].sort(),
    tamperSignatures: [...new Set(tampering.map((f) => f.signature))].sort(),
    failureSignature: failedGates[0]?.failureSignature ?? null,
  };

  const reasons: string[] = [];
  const directives: string[] = [];
  let verdict: Verdict;
  let trigger: EscalationTrigger | null = null;
  let rule: VerdictRule;

  const environment = [input.environmentProblem, ...failedGates.map((g) => g.environmentProblem)].filter(
    (p): p is string => Boolean(p),
  );
  if (environment.length > 0) {
    // Rule 0: dependencies could not be installed, or a gate could not start (a tool is missing). The
    // maker cannot fix the machine: sending it back would only burn iterations.
    verdict = 'ESCALATE';
    trigger = 'ENVIRONMENT';
    rule = 'ENVIRONMENT';
    reasons.push(...environment.map((p) => `environment problem: ${p}`));
  } else if (failedGates.length > 0) {
    // Rule 1: a configured gate failed.
    verdict = 'ITERATE';
    rule = 'GATES_FAILED';
    for (const g of failedGates) {
      reasons.push(`gate ${g.gate} failed`);
      directives.push(`Fix the failing ${g.gate} gate: ${g.failureReason ?? 'it did not pass'}.`);
    }
    // Gaming verification is never left for later, even while a gate fails.
    if (tampering.length > 0) reasons.push(`${tampering.length} tamper/scope violation(s)`);
    directives.push(...tampering.map(findingDirective));
  } else if (blocking.length > 0) {
    // Rule 2: VALID BLOCKER/HIGH findings.
    verdict = 'ITERATE';
    rule = 'BLOCKING_FINDINGS';
    reasons.push(`${blocking.length} valid blocking finding(s)`);
    directives.push(...blocking.map(findingDirective));
  } else if (input.review.status === 'INCOMPLETE') {
    // No PASS on a review that did not see every changed file; the maker's change is what is too large.
    verdict = 'ESCALATE';
    trigger = 'REVIEW_INCOMPLETE';
    rule = 'REVIEW_INCOMPLETE';
    reasons.push(`review incomplete: ${input.review.reason}`);
  } else if (input.review.status !== 'COMPLETED') {
    // No PASS without a review; retrying the maker cannot repair the reviewer.
    verdict = 'ESCALATE';
    trigger = 'REVIEW_UNAVAILABLE';
    rule = 'REVIEW_UNAVAILABLE';
    reasons.push(`review unavailable: ${input.review.reason}`);
  } else if (unproven.length > 0) {
    // Rule 3: an acceptance criterion without passing evidence.
    verdict = 'ITERATE';
    rule = 'ACCEPTANCE_UNPROVEN';
    for (const ac of unproven) {
      const criterion = input.acceptanceCriteria.find((c) => c.id === ac.id);
      reasons.push(`${ac.id} has no passing evidence`);
      directives.push(`Prove ${ac.id} (${ac.statement}) with passing evidence: ${criterion?.proof ?? ''}.`);
    }
  } else if (input.maker.cumulativeDiffEmpty) {
    // A "success" with no diff is a stall (docs/design.md §8.3).
    verdict = 'ESCALATE';
    trigger = 'NO_CHANGE';
    rule = 'EMPTY_DIFF';
    reasons.push('everything passes but the branch has no change against the base commit');
  } else {
    verdict = 'PASS';
    rule = 'ALL_CLEAR';
    reasons.push('all configured gates passed, no valid blocking findings, every acceptance criterion proven');
  }

  // What the review left out, and by which rule, is part of what the verdict rests on.
  if (input.review.status === 'COMPLETED') {
    for (const e of input.review.coverage?.excluded ?? []) {
      const more = e.files > e.sample.length ? `, ${e.files - e.sample.length} more` : '';
      reasons.push(`not reviewed (${e.rule}): ${e.files} file(s): ${e.sample.join(', ')}${more}`);
    }
  }

  if (verdict === 'ITERATE') {
    trigger = escalationTrigger(input, record);
    if (trigger) {
      verdict = 'ESCALATE';
      rule = trigger;
      reasons.push(`escalated: ${trigger}`);
    }
  }
  // Never continue silently past a budget: anything but a finished PASS goes to a human.
  if (input.budgetExhausted && verdict !== 'PASS') {
    verdict = 'ESCALATE';
    trigger = 'BUDGET_EXHAUSTED';
    rule = 'BUDGET_EXHAUSTED';
    reasons.push(input.budgetExhausted);
  }
  // An agent that says the task is contradictory, needs a destructive operation, or hit a failure it
  // cannot reproduce has asked for a human, whatever the gates say.
  if (input.maker.agentReport) {
    verdict = 'ESCALATE';
    trigger = `AGENT_${input.maker.agentReport.kind}`;
    rule = trigger;
    reasons.push(
      `the maker reported ${input.maker.agentReport.kind.toLowerCase().replace(/_/g, ' ')}: ${input.maker.agentReport.reason}`,
    );
  }

  return {
    verdict,
    trigger,
    rule,
    roundIteration: input.roundIteration,
    maxIterations: input.maxIterations,
    reasons,
    gateAudit: input.gates.map(({ gate, status, exitCode, timeoutStatus, testCounts, evidenceId, failureReason }) => ({
      gate,
      status,
      exitCode,
      timeoutStatus,
      testCounts,
      evidenceId,
      failureReason,
    })),
    acCompliance,
    findingTriage: findings.map((f) => ({
      findingId: f.findingId,
      title: f.title,
      severity: f.severity,
      validity: f.validity,
      outcome: isBlocking(f) ? 'BLOCKING' : f.validity === 'VALID' ? 'ACCEPTED_TRADE_OFF' : 'DISMISSED',
    })),
    directives: directives.map((d, i) => `${i + 1}. ${d}`),
    record,
  };
}

/**
 * The report of an escalation that comes before any verdict: the maker's workspace could not be set up.
 * The problem (with the output's tail) is the core blocker; no gate ran, nothing was judged.
 */
export function environmentReport(problem: string, roundIteration: number, maxIterations: number): JudgeReport {
  return {
    verdict: 'ESCALATE',
    trigger: 'ENVIRONMENT',
    rule: 'ENVIRONMENT',
    roundIteration,
    maxIterations,
    reasons: [`environment problem: ${problem}`],
    gateAudit: [],
    acCompliance: [],
    findingTriage: [],
    directives: [],
    record: { roundIteration, diffHash: '', blockingSignatures: [], tamperSignatures: [], failureSignature: null },
  };
}

function findingDirective(f: FindingSummary): string {
  const where = `${f.location.file}:${f.location.startLine}-${f.location.endLine}`;
  const action = f.source === 'SYSTEM' ? 'Revert' : 'Resolve';
  return `${action} ${f.findingId} (${f.severity}, ${where}): ${f.title}.`;
}

/** When an ITERATE must become ESCALATE (docs/design.md §6.2), checked in a fixed order. */
function escalationTrigger(input: JudgeInput, current: IterationRecord): EscalationTrigger | null {
  const last = input.previous.at(-1);
  const twoBack = input.previous.at(-2);
  // A maker that changed nothing is the more telling reason, even on the last iteration.
  if (input.maker.noChange) return 'NO_CHANGE';
  if (input.roundIteration >= input.maxIterations) return 'MAX_ITERATIONS';
  if (last && current.tamperSignatures.some((s) => last.tamperSignatures.includes(s))) return 'REPEATED_TAMPER';
  if (last && current.blockingSignatures.some((s) => last.blockingSignatures.includes(s))) {
    return 'REPEATED_BLOCKING_SIGNATURE';
  }
  if (twoBack && twoBack.diffHash === current.diffHash) return 'PING_PONG_DIFF';
  if (last && current.failureSignature !== null && last.failureSignature === current.failureSignature) {
    return 'REPEATED_GATE_FAILURE';
  }
  return null;
}

function acceptanceCompliance(input: JudgeInput): JudgeReport['acCompliance'] {
  return input.acceptanceCriteria.map((ac) => {
    const evidenceIds = [
      ...input.gates
        .filter((g) => g.status === 'PASSED' && g.provesAcceptanceCriteria.includes(ac.id) && g.evidenceId)
        .map((g) => g.evidenceId as string),
      ...input.acceptanceChecks.filter((c) => c.acId === ac.id && c.status === 'PASSED').map((c) => c.evidenceId),
    ];
    return {
      id: ac.id,
      statement: ac.statement,
      status: evidenceIds.length > 0 ? 'PROVEN' : 'NOT_PROVEN',
      evidenceIds,
    };
  });
}
