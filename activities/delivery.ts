import type { JudgeReport } from '../domain/judge';
import { describeSandbox, renderFinalReport, type FinalReport } from '../domain/reports';
import type { ActivityDeps } from './deps';
import { git } from './git';

export interface DeliverInput {
  loopId: string;
  sequence: number;
  outcome: FinalReport['outcome'];
  approvedBy: string | null;
}

/** Writes the final report: branch, commits, the judge report and how review ran — stated from recorded calls only. */
export async function deliver(deps: ActivityDeps, input: DeliverInput): Promise<{ reportId: string }> {
  const loop = await deps.prisma.loop.findUniqueOrThrow({ where: { id: input.loopId } });
  const iteration = await deps.prisma.iteration.findUniqueOrThrow({
    where: { loopId_sequence: { loopId: input.loopId, sequence: input.sequence } },
    include: { verdict: true },
  });
  const contract = await deps.prisma.contractVersion.findFirstOrThrow({
    where: { loopId: input.loopId, version: iteration.contractVersion },
  });
  const checkpoint = iteration.checkpointCommit ?? loop.baseCommit!;
  const commits = (await git(loop.workspacePath!, ['log', '--format=%H', `${loop.baseCommit}..${checkpoint}`])).split('\n').filter(Boolean);
  const reviewCall = await deps.prisma.executionRecord.findFirst({
    where: { loopId: input.loopId, iterationSeq: input.sequence, role: 'reviewer', outcome: 'VALID_LEDGER' },
    orderBy: { createdAt: 'desc' },
  });
  const report: FinalReport = {
    outcome: input.outcome,
    objective: (contract.contract as { objective: string }).objective,
    contract: { version: contract.version, hash: contract.hash },
    branch: loop.branch ?? '',
    baseCommit: loop.baseCommit ?? '',
    checkpointCommit: checkpoint,
    commits,
    reviewMode: !reviewCall
      ? 'review unavailable'
      : reviewCall.kind === 'MODEL_CALL'
        ? `independent model call (model ${reviewCall.model ?? 'unknown'}, response id ${reviewCall.responseId ?? 'not returned'})`
        : `independent agent review (${reviewCall.provider}, pid ${reviewCall.pid ?? 'unknown'}, session ${reviewCall.responseId ?? 'not reported'})`,
    judge: iteration.verdict!.report as unknown as JudgeReport,
    sandbox: describeSandbox(loop.sandbox),
    ...(input.approvedBy ? { approvedBy: input.approvedBy } : {}),
  };
  const stored = await deps.prisma.report.upsert({
    where: { loopId_key: { loopId: input.loopId, key: 'final' } },
    create: { loopId: input.loopId, kind: 'FINAL', key: 'final', body: report as object, markdown: renderFinalReport(report) },
    update: {},
  });
  return { reportId: stored.id };
}
