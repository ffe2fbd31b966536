import type { PrismaClient } from '../store/db';
import { loopWithHistory } from '../store/read-model';
import { makerRunRecords } from '../store/execution-records';
import { makerOutcomesBySequence } from '../domain/maker-outcome';

// How loops look through the API: read-model rows mapped to plain JSON (large texts left out).

export async function loopDetail(prisma: PrismaClient, id: string) {
  const loop = await loopWithHistory(prisma, id);
  if (!loop) return null;
  const makerRuns = makerOutcomesBySequence(await makerRunRecords(prisma, id));
  return {
    ...loopSummary(loop),
    baseCommit: loop.baseCommit,
    branch: loop.branch,
    failureReason: loop.failureReason,
    /** Set while the current step's attempts meet an outage of the model provider, which they outlast. */
    waiting: loop.waitingFor ? { reason: loop.waitingFor, since: loop.waitingSince?.toISOString() ?? null } : null,
    gatePlan: loop.gatePlan,
    /** How untrusted commands were confined; "none" means the operator ran this loop unsandboxed. */
    sandbox: loop.sandbox,
    /** Where the branch went: pushed branch, pull/merge request, or why delivery stopped short (the result stands). */
    delivery: {
      pushedBranch: loop.pushedBranch,
      pullRequestUrl: loop.pullRequestUrl,
      deliveryError: loop.deliveryError,
      /** NONE, TARGETED or MAJOR: what the change invalidates of what is known about the repository (read before delivery). */
      contextImpact: loop.contextImpact,
    },
    contractVersions: loop.contractVersions.map((c) => ({
      version: c.version,
      hash: c.hash,
      reason: c.reason,
      createdAt: c.createdAt.toISOString(),
      contract: c.contract,
    })),
    /** The maker workspace's set-up runs (dependencies installed before the first maker, and again when manifests change). */
    workspaceSetup: loop.evidence.map(evidenceView),
    iterations: loop.iterations.map((i) => ({
      sequence: i.sequence,
      roundIteration: i.roundIteration,
      contractVersion: i.contractVersion,
      startCommit: i.startCommit,
      checkpointCommit: i.checkpointCommit,
      diffHash: i.diffHash,
      changedFiles: (i.changedFiles as string[] | null) ?? [],
      noChange: i.noChange,
      makerExitCode: i.makerExitCode,
      /** How the maker's run ended and why, from its execution record (null: not recorded). */
      maker: makerRuns.get(i.sequence) ?? null,
      makerAttempts: i.makerAttempts,
      backtrackedTo: i.backtrackedTo,
      /** Set on an iteration that replayed the passed change onto a base that moved before delivery (no maker of its own). */
      replayedFrom: i.replayedFromCheckpoint
        ? { base: i.replayedFromBase, checkpoint: i.replayedFromCheckpoint }
        : null,
      verdict: i.verdict
        ? { verdict: i.verdict.verdict, trigger: i.verdict.trigger, directives: i.verdict.directives as string[] }
        : null,
      evidence: i.evidence.map(evidenceView),
      findings: i.findings.map((f) => ({
        findingId: f.findingId,
        title: f.title,
        topic: f.topic,
        severity: f.severity,
        validity: f.validity,
        signature: f.signature,
        source: f.source,
        rule: f.rule,
        location: f.location,
        evidence: f.evidence,
        // For a system finding: what the gaming it caught would have hidden.
        failureScenario: f.failureScenario,
      })),
    })),
    escalations: loop.escalations.map((e) => ({
      id: e.id,
      sequence: e.sequence,
      trigger: e.trigger,
      status: e.status,
      reportId: e.reportId,
      createdAt: e.createdAt.toISOString(),
      decision: e.decisions[0]
        ? {
            kind: e.decisions[0].kind,
            actor: e.decisions[0].actor,
            guidance: e.decisions[0].guidance,
            comment: e.decisions[0].comment,
            createdAt: e.decisions[0].createdAt.toISOString(),
          }
        : null,
    })),
    // Decisions the workflow refused (no valid API ticket, actor not allowed): the loop kept waiting.
    refusedDecisions: loop.executions.map((x) => ({
      channel: x.provider,
      reason: x.detail ?? '',
      createdAt: x.createdAt.toISOString(),
    })),
  };
}

export function loopSummary(loop: {
  id: string;
  workflowId: string;
  status: string;
  phase: string;
  repoUrl: string;
  baseRef: string;
  maxIterations: number;
  roundIteration: number;
  lastVerdict: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}) {
  return {
    id: loop.id,
    workflowId: loop.workflowId,
    status: loop.status,
    phase: loop.phase,
    repository: { url: loop.repoUrl, baseRef: loop.baseRef },
    iteration: loop.roundIteration,
    maxIterations: loop.maxIterations,
    lastVerdict: loop.lastVerdict,
    createdAt: loop.createdAt.toISOString(),
    updatedAt: loop.updatedAt.toISOString(),
    finishedAt: loop.finishedAt?.toISOString() ?? null,
  };
}

function evidenceView(e: {
  id: string;
  gate: string;
  status: string;
  command: unknown;
  source: string;
  sourceDetail: string | null;
  exitCode: number | null;
  timeoutStatus: string | null;
  testCounts: unknown;
  passedTests: unknown;
  failedTests: unknown;
  failureReason: string | null;
  assertionEvidence: unknown;
}) {
  return {
    id: e.id,
    gate: e.gate,
    status: e.status,
    command: e.command as string[],
    source: e.source,
    sourceDetail: e.sourceDetail,
    exitCode: e.exitCode,
    timeoutStatus: e.timeoutStatus,
    testCounts: e.testCounts,
    passedTests: e.passedTests as string[] | null,
    failedTests: e.failedTests as string[] | null,
    failureReason: e.failureReason,
    assertionEvidence: e.assertionEvidence as string[],
  };
}
