import { ESCALATION_TRIGGERS, VERDICT_RULES, type JudgeReport, type VerdictRule } from './judge';

// Why a stored verdict is what it is, in words: the rule that fired and the inputs it used (docs/design.md §8.4).
// Pure: the API reads the stored Judge Report and the iteration's findings, this turns them into text.

/** What each rule of the judge means, for people reading an explanation. */
export const RULE_DESCRIPTIONS: Record<VerdictRule, string> = {
  ENVIRONMENT:
    'dependencies could not be installed or a gate could not start; the machine needs a person, not the maker',
  GATES_FAILED: 'a configured gate failed; the maker fixes it (review does not run while a gate fails)',
  BLOCKING_FINDINGS:
    'VALID BLOCKER or HIGH findings (the reviewer’s after triage, or the system’s own tamper/scope rules) must be resolved',
  REVIEW_UNAVAILABLE: 'no PASS without an independent review, and the review could not be had',
  REVIEW_INCOMPLETE:
    'no PASS without a review of every changed file, and the change is past the review’s ceiling of files or bytes',
  ACCEPTANCE_UNPROVEN: 'an acceptance criterion has no passing evidence',
  EMPTY_DIFF: 'everything passes but the branch has no change against the base commit: a stall, not a PASS',
  ALL_CLEAR: 'all configured gates passed, no valid blocking findings, every acceptance criterion proven',
  NO_CHANGE: 'the maker produced no change in this iteration and the work is not done',
  MAX_ITERATIONS: 'the work is not done and the iteration limit is reached',
  REPEATED_TAMPER: 'the same tamper/scope rule fired in two consecutive iterations',
  REPEATED_BLOCKING_SIGNATURE: 'the same blocking finding came back in two consecutive iterations',
  PING_PONG_DIFF: 'the diff repeats the one of two iterations back',
  REPEATED_GATE_FAILURE: 'the same gate failed with the same output twice in a row',
  BUDGET_EXHAUSTED: 'the loop’s budget is spent and the work is not done',
  AGENT_CONTRADICTION: 'the maker reported contradictory requirements',
  AGENT_DESTRUCTIVE_OPERATION: 'the maker reported that the task needs a destructive operation',
  AGENT_IRREPRODUCIBLE_FAILURE: 'the maker reported a failure it cannot reproduce',
  BASE_DRIFT:
    'the change passed, but its base branch moved before delivery and the change no longer merges onto it or fails verification there',
  MAJOR_CONTEXT_IMPACT: 'the change passed, but its context impact is MAJOR and delivery waits for a person',
};

/** A Judge Report as stored in Verdict.report: reports stored before a field existed lack it. */
export type StoredJudgeReport = Partial<JudgeReport>;

/** Finding details beside the report's triage table (source, rule, location), from the Finding table. */
export interface FindingDetail {
  findingId: string;
  source: string;
  rule: string | null;
  location: { file?: string; startLine?: number; endLine?: number } | null;
}

/**
 * The rule that decided a verdict: the recorded one, or for verdicts stored before rules were recorded,
 * derived from the verdict, trigger and the report's tables the way computeVerdict decides.
 */
export function verdictRuleOf(report: StoredJudgeReport): { rule: VerdictRule | 'UNKNOWN'; recorded: boolean } {
  if (report.rule && (VERDICT_RULES as readonly string[]).includes(report.rule))
    return { rule: report.rule, recorded: true };
  return { rule: derivedRule(report), recorded: false };
}

function derivedRule(report: StoredJudgeReport): VerdictRule | 'UNKNOWN' {
  if (report.verdict === 'PASS') return 'ALL_CLEAR';
  if (report.verdict === 'ESCALATE') {
    const trigger = report.trigger;
    if (trigger === 'NO_CHANGE' && (report.reasons ?? []).some((r) => r.includes('no change against the base commit')))
      return 'EMPTY_DIFF';
    return trigger && (ESCALATION_TRIGGERS as readonly string[]).includes(trigger) ? trigger : 'UNKNOWN';
  }
  if (report.verdict === 'ITERATE') {
    if ((report.gateAudit ?? []).some((g) => g.status === 'FAILED')) return 'GATES_FAILED';
    if ((report.findingTriage ?? []).some((f) => f.outcome === 'BLOCKING')) return 'BLOCKING_FINDINGS';
    if ((report.acCompliance ?? []).some((ac) => ac.status === 'NOT_PROVEN')) return 'ACCEPTANCE_UNPROVEN';
  }
  return 'UNKNOWN';
}

/** The explanation of a verdict: a headline naming the rule and what it saw, then one line per input table. */
export function explainVerdict(report: StoredJudgeReport, findings: readonly FindingDetail[] = []): string[] {
  const { rule } = verdictRuleOf(report);
  const gates = report.gateAudit ?? [];
  const criteria = report.acCompliance ?? [];
  const triage = report.findingTriage ?? [];
  const configured = gates.filter((g) => g.status !== 'NOT_CONFIGURED');
  const blocking = triage.filter((f) => f.outcome === 'BLOCKING');
  const unproven = criteria.filter((ac) => ac.status === 'NOT_PROVEN');
  const system = findings.filter((f) => f.source === 'SYSTEM');
  const where =
    report.roundIteration !== undefined && report.maxIterations !== undefined
      ? ` at iteration ${report.roundIteration} of ${report.maxIterations}`
      : '';
  const verdict = `${report.verdict ?? 'UNKNOWN'}${report.trigger ? ` (${report.trigger})` : ''}`;
  const blockingText = blocking.map(findingText).join('; ');

  let headline: string;
  switch (rule) {
    case 'ALL_CLEAR':
      headline =
        `${verdict}: all configured gates passed (${names(configured.map((g) => g.gate))}), no valid blocking findings, ` +
        `every acceptance criterion proven (${criteria.length} of ${criteria.length}).`;
      break;
    case 'GATES_FAILED':
      headline = `${verdict}: the ${names(gates.filter((g) => g.status === 'FAILED').map((g) => g.gate))} gate failed${where}; the maker is sent back to fix it.`;
      break;
    case 'BLOCKING_FINDINGS':
      headline = `${verdict}: ${blocking.length} valid blocking finding(s)${where}: ${blockingText}.`;
      break;
    case 'ACCEPTANCE_UNPROVEN':
      headline = `${verdict}: acceptance criteria without passing evidence${where}: ${names(unproven.map((ac) => ac.id))}.`;
      break;
    case 'UNKNOWN':
      headline = `${verdict}${where}: ${(report.reasons ?? []).join('; ') || 'no reasons were recorded'}.`;
      break;
    default:
      // An escalation: what the rule means, and what was still blocking when it fired.
      headline = `${verdict}${where}: ${RULE_DESCRIPTIONS[rule]}.${blocking.length > 0 ? ` Still blocking: ${blockingText}.` : ''}`;
  }

  return [
    headline,
    `Rule ${rule}: ${rule === 'UNKNOWN' ? 'not recorded and not derivable from the stored report' : RULE_DESCRIPTIONS[rule]}.`,
    `Judge's reasons, in order: ${(report.reasons ?? []).map((r, i) => `${i + 1}) ${r}`).join(' ') || 'none recorded'}.`,
    `Gates: ${gates.map(gateText).join('; ') || 'none ran'}.`,
    `Acceptance criteria: ${criteria.map((ac) => `${ac.id} ${ac.status}`).join('; ') || 'none checked'}.`,
    `Findings: ${triage.map((f) => `${findingText(f)} → ${f.outcome}`).join('; ') || 'none'}.`,
    `System findings: ${system.map((f) => `${f.findingId}${f.rule ? ` (${f.rule})` : ''}${locationText(f.location)}`).join('; ') || 'none'}.`,
  ];
}

function names(list: string[]): string {
  return list.length === 0 ? 'none' : list.join(', ');
}

function findingText(f: NonNullable<JudgeReport['findingTriage']>[number]): string {
  return `${f.findingId} ${f.severity} ${f.validity} “${f.title}”`;
}

function gateText(g: JudgeReport['gateAudit'][number]): string {
  const facts = [
    g.exitCode !== null && g.exitCode !== undefined ? `exit ${g.exitCode}` : null,
    g.testCounts
      ? `${g.testCounts.passed} passed, ${g.testCounts.failed} failed, ${g.testCounts.skipped} skipped`
      : null,
    g.timeoutStatus && g.timeoutStatus !== 'COMPLETED' ? g.timeoutStatus : null,
    g.failureReason ?? null,
  ].filter((f): f is string => f !== null);
  return `${g.gate} ${g.status}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}`;
}

function locationText(location: FindingDetail['location']): string {
  if (!location?.file) return '';
  return ` at ${location.file}${location.startLine ? `:${location.startLine}` : ''}${location.endLine && location.endLine !== location.startLine ? `-${location.endLine}` : ''}`;
}
