import type { ResolvedGate } from '../domain/gates';
import { signatureMaterial, type FindingSummary } from '../domain/ledger';
import { sanitise } from '../domain/sanitise';
import { loadContract } from './contract';
import type { ActivityDeps } from './deps';
import { sha256 } from './git';
import { detectTampering } from './tamper/detect-tampering';

export interface InspectChangesInput {
  loopId: string;
  sequence: number;
  contractVersion: number;
  gates: ResolvedGate[];
}

/**
 * Checks the branch (base → this iteration's checkpoint) for attempts to game verification or leave
 * the contract's scope (SPEC §3.4). Each violation is stored as a VALID BLOCKER finding raised by the
 * system itself. Idempotent per (loop, sequence).
 */
export async function inspectChanges(deps: ActivityDeps, input: InspectChangesInput): Promise<FindingSummary[]> {
  const loop = await deps.prisma.loop.findUniqueOrThrow({ where: { id: input.loopId } });
  const iteration = await deps.prisma.iteration.findUniqueOrThrow({
    where: { loopId_sequence: { loopId: input.loopId, sequence: input.sequence } },
  });
  if (!iteration.inspectedAt) {
    const { contract } = await loadContract(deps, input.loopId, input.contractVersion);
    const tampering = await detectTampering({
      workspace: loop.workspacePath!,
      baseCommit: loop.baseCommit!,
      checkpointCommit: iteration.checkpointCommit!,
      gates: input.gates,
      scope: contract.scope,
      outOfScope: contract.outOfScope,
    });
    await deps.prisma.$transaction([
      deps.prisma.finding.createMany({
        data: tampering.map((t, i) => ({
          loopId: input.loopId,
          iterationId: iteration.id,
          findingId: `TMP-${String(i + 1).padStart(3, '0')}`,
          source: 'SYSTEM',
          rule: t.rule,
          signature: sha256(signatureMaterial(t)).slice(0, 16),
          // Both may quote lines of the diff.
          title: sanitise(t.title),
          topic: t.topic,
          severity: 'BLOCKER',
          validity: 'VALID',
          disposition: 'STRONG',
          location: t.location,
          acceptanceCriteria: ['GENERAL_REGRESSION'],
          evidence: sanitise(t.evidence),
          failureScenario: 'Verification would pass without proving the contract, or the change reaches beyond its scope.',
          reproduction: `git diff ${loop.baseCommit}..${iteration.checkpointCommit} -- ${t.location.file}`,
          concreteAlternativeDiff: `Revert the change to ${t.location.file} and meet the contract without it.`,
        })),
        skipDuplicates: true,
      }),
      deps.prisma.iteration.update({ where: { id: iteration.id }, data: { inspectedAt: new Date() } }),
    ]);
  }
  const stored = await deps.prisma.finding.findMany({
    where: { iterationId: iteration.id, source: 'SYSTEM' },
    orderBy: { findingId: 'asc' },
  });
  return stored.map((f) => ({
    findingId: f.findingId,
    title: f.title,
    topic: f.topic as FindingSummary['topic'],
    severity: 'BLOCKER',
    validity: 'VALID',
    location: f.location as FindingSummary['location'],
    acceptanceCriteria: ['GENERAL_REGRESSION'],
    signature: f.signature,
    source: 'SYSTEM',
  }));
}
