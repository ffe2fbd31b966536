import type { ResolvedGate } from '../domain/gates';
import type { FindingSummary } from '../domain/ledger';
import { sanitise } from '../domain/sanitise';
import { loadContract } from './contract';
import { LOOP_WORKSPACE } from './workspace';
import { early, inOrder } from './in-order';
import type { ActivityDeps } from './deps';
import { sha256 } from './git';
import { leftBehindFiles } from './left-behind-files';
import { detectTampering } from './tamper/detect-tampering';
import { storedSystemFindings, systemFindingRow, VERIFICATION_FINDING_PREFIX } from './system-findings';

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
  // Read together (the contract is needed unless a retry finds the iteration inspected).
  const frozen = early(loadContract(deps, input.loopId, input.contractVersion));
  const [loop, iteration] = await inOrder([
    deps.prisma.loop.findUniqueOrThrow({ where: { id: input.loopId }, select: LOOP_WORKSPACE }),
    deps.prisma.iteration.findUniqueOrThrow({ where: { loopId_sequence: { loopId: input.loopId, sequence: input.sequence } } }),
  ]);
  if (!iteration.inspectedAt) {
    const { contract } = await frozen;
    const [tampering, leftBehind] = await inOrder([
      detectTampering({
        workspace: loop.workspacePath!,
        baseCommit: loop.baseCommit!,
        checkpointCommit: iteration.checkpointCommit!,
        gates: input.gates,
        scope: contract.scope,
        outOfScope: contract.outOfScope,
      }),
      leftBehindFiles(loop.workspacePath!),
    ]);
    await deps.prisma.$transaction([
      deps.prisma.finding.createMany({
        data: tampering.map((t, i) =>
          systemFindingRow(t, {
            loopId: input.loopId,
            iterationId: iteration.id,
            findingId: `TMP-${String(i + 1).padStart(3, '0')}`,
            baseCommit: loop.baseCommit!,
            checkpointCommit: iteration.checkpointCommit!,
            contract,
          }),
        ),
        skipDuplicates: true,
      }),
      ...(leftBehind.length > 0 ? [deps.prisma.finding.createMany({ data: [leftBehindFinding(input.loopId, iteration.id, leftBehind)], skipDuplicates: true })] : []),
      deps.prisma.iteration.update({ where: { id: iteration.id }, data: { inspectedAt: new Date() } }),
    ]);
  }
  // Verification's own findings (VER-…) come later, in its result.
  return (await storedSystemFindings(deps, iteration.id)).filter((f) => !f.findingId.startsWith(VERIFICATION_FINDING_PREFIX));
}

/**
 * Not blocking: the files cannot affect verification (gates run on a clean checkout of the commit), but
 * the reviewer and a person see which ones the maker hid from the checkpoint.
 */
function leftBehindFinding(loopId: string, iterationId: string, files: string[]) {
  const title = `files left outside the checkpoint (ignored by git): ${files.slice(0, 5).join(', ')}${files.length > 5 ? ', …' : ''}`;
  return {
    loopId,
    iterationId,
    findingId: 'SYS-IGNORED',
    source: 'SYSTEM',
    rule: 'UNCOMMITTED_FILES',
    signature: sha256(`UNCOMMITTED_FILES|${files.join('|')}`).slice(0, 16),
    title: sanitise(title),
    topic: 'testing_gaps',
    severity: 'MEDIUM',
    validity: 'VALID',
    disposition: 'STRONG',
    location: { file: files[0]!, startLine: 1, endLine: 1 },
    acceptanceCriteria: ['GENERAL_REGRESSION'],
    evidence: sanitise(`git ls-files --others --ignored --exclude-standard lists:\n${files.join('\n')}`),
    failureScenario: 'Had gates run on the working tree, these files would have changed what they checked; they run on a clean checkout, so they did not.',
    reproduction: 'git ls-files --others --ignored --exclude-standard --directory',
    concreteAlternativeDiff: 'Delete these files, or commit them if the change needs them.',
  };
}
