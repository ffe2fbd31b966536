import {
  explainVerdict,
  RULE_DESCRIPTIONS,
  verdictRuleOf,
  type FindingDetail,
  type StoredJudgeReport,
} from '../domain/verdict-explanation';
import type { PrismaClient } from '../store/db';
import { iterationWithFindings } from '../store/read-model';
import { notFound } from './errors';
import { loadLoop } from './load-loop';
import type { Explanation } from './timeline-schemas';

// Why an iteration's verdict was reached: the stored Judge Report (verdict, trigger, rule, reasons and
// the tables the rules read) with the iteration's findings beside it, and the same in sentences.

/** The explanation of iteration `sequence`'s verdict; 404 for an unknown loop or iteration, or one not judged yet. */
export async function explainIteration(prisma: PrismaClient, loopId: string, sequence: number): Promise<Explanation> {
  await loadLoop(prisma, loopId);
  const iteration = await iterationWithFindings(prisma, loopId, sequence);
  if (!iteration) throw notFound(`iteration ${sequence} of loop ${loopId}`);
  if (!iteration.verdict) throw notFound(`a verdict for iteration ${sequence} of loop ${loopId} (not judged yet)`);

  const report = iteration.verdict.report as StoredJudgeReport;
  const { rule, recorded } = verdictRuleOf(report);
  const details: FindingDetail[] = iteration.findings.map((f) => ({
    findingId: f.findingId,
    source: f.source,
    rule: f.rule,
    location: f.location as FindingDetail['location'],
  }));
  const byId = new Map(iteration.findings.map((f) => [f.findingId, f]));
  return {
    loopId,
    iteration: iteration.sequence,
    roundIteration: report.roundIteration ?? iteration.roundIteration,
    maxIterations: report.maxIterations ?? null,
    contractVersion: iteration.contractVersion,
    verdict: iteration.verdict.verdict,
    trigger: iteration.verdict.trigger,
    rule,
    ruleRecorded: recorded,
    ruleDescription:
      rule === 'UNKNOWN'
        ? 'the rule was not recorded and cannot be derived from the stored report'
        : RULE_DESCRIPTIONS[rule],
    reasons: report.reasons ?? [],
    directives: (iteration.verdict.directives as string[] | null) ?? [],
    explanation: explainVerdict(report, details),
    inputs: {
      gateAudit: report.gateAudit ?? [],
      acCompliance: report.acCompliance ?? [],
      findingTriage: (report.findingTriage ?? []).map((f) => {
        const stored = byId.get(f.findingId);
        return { ...f, source: stored?.source ?? null, rule: stored?.rule ?? null, location: stored?.location ?? null };
      }),
      systemFindings: iteration.findings
        .filter((f) => f.source === 'SYSTEM')
        .map((f) => ({
          findingId: f.findingId,
          rule: f.rule,
          title: f.title,
          severity: f.severity,
          validity: f.validity,
          location: f.location,
        })),
    },
    decidedAt: iteration.verdict.createdAt.toISOString(),
  };
}
