import type { GoalContract } from '../domain/contract';
import type { ResolvedGate } from '../domain/gates';
import type { FindingSummary } from '../domain/ledger';
import { sanitise } from '../domain/sanitise';
import { loadContract } from './contract';
import { preparedLoop } from './prepared-workspace';
import { early, inOrder } from './in-order';
import type { ActivityDeps } from './deps';
import { inTransaction } from '../store/db';
import { insertFindings } from '../store/findings';
import { iterationAt, markInspected } from '../store/iterations';
import { sha256 } from './git';
import { leftBehindFiles } from './left-behind-files';
import type { TamperFinding, TamperInput } from '../analysis/tamper/types';
import { detectTampering } from './tamper/detect-tampering';
import { acceptanceTestNames } from '../analysis/verification/proven-criteria';
import { storedSystemFindings, systemFindingRow, VERIFICATION_FINDING_PREFIX } from './system-findings';

export interface InspectChangesInput {
  loopId: string;
  sequence: number;
  contractVersion: number;
  gates: ResolvedGate[];
}

/** The tamper rules' findings are numbered apart from verification's (VER-…) of the same iteration. */
export const TAMPER_FINDING_PREFIX = 'TMP-';

/** The checkpoint the tamper and scope check looks at, and what it checks it against. */
export interface InspectedCheckpoint {
  loopId: string;
  iterationId: string;
  workspace: string;
  baseCommit: string;
  checkpointCommit: string;
  contract: GoalContract;
  gates: ResolvedGate[];
  /** Files the base run's runner collected tests from that no path glob names (collected-test-files.ts). */
  collectedTests?: string[];
}

/** What the check found in git: the tamper rules' findings and the files git ignores. Nothing is stored. */
export interface Examination {
  tampering: TamperFinding[];
  leftBehind: string[];
}

/**
 * Checks the branch (base → this iteration's checkpoint) for attempts to game verification or leave
 * the contract's scope (docs/design.md §3.4). Each violation is stored as a VALID BLOCKER finding raised by the
 * system itself. Idempotent per (loop, sequence).
 */
export async function inspectChanges(deps: ActivityDeps, input: InspectChangesInput): Promise<FindingSummary[]> {
  // Read together (the contract is needed unless a retry finds the iteration inspected).
  const frozen = early(loadContract(deps, input.loopId, input.contractVersion));
  const [loop, iteration] = await inOrder([
    preparedLoop(deps, input.loopId),
    iterationAt(deps.prisma, input.loopId, input.sequence),
  ]);
  if (iteration.inspectedAt) return inspectionFindings(deps, iteration.id);
  const at: InspectedCheckpoint = {
    loopId: input.loopId,
    iterationId: iteration.id,
    workspace: loop.workspacePath,
    baseCommit: loop.baseCommit,
    checkpointCommit: iteration.checkpointCommit!,
    contract: (await frozen).contract,
    gates: input.gates,
  };
  return recordInspection(deps, at, await examineCheckpoint(at));
}

/**
 * The check's reads of git, which need nothing from the database (the maker's activity starts them early,
 * and may have listed the ignored files already: `listed`).
 */
export async function examineCheckpoint(
  at: InspectedCheckpoint,
  listed: Promise<string[]> = leftBehindFiles(at.workspace),
): Promise<Examination> {
  const [tampering, leftBehind] = await inOrder([detectTampering(tamperInput(at)), listed]);
  return { tampering, leftBehind };
}

/** What the tamper rules check a checkpoint against. */
export function tamperInput(
  at: Pick<
    InspectedCheckpoint,
    'workspace' | 'baseCommit' | 'checkpointCommit' | 'gates' | 'contract' | 'collectedTests'
  >,
): TamperInput {
  return {
    workspace: at.workspace,
    baseCommit: at.baseCommit,
    checkpointCommit: at.checkpointCommit,
    gates: at.gates,
    scope: at.contract.scope,
    outOfScope: at.contract.outOfScope,
    acceptanceTests: acceptanceTestNames(at.contract),
    ...(at.collectedTests?.length ? { collectedTests: at.collectedTests } : {}),
  };
}

/** Stores what the check found with the iteration's inspected mark (one transaction); returns its findings. */
export async function recordInspection(
  deps: ActivityDeps,
  at: InspectedCheckpoint,
  found: Examination,
): Promise<FindingSummary[]> {
  await inTransaction(deps.prisma, [
    insertFindings(
      deps.prisma,
      found.tampering.map((t, i) =>
        systemFindingRow(t, { ...at, findingId: `${TAMPER_FINDING_PREFIX}${String(i + 1).padStart(3, '0')}` }),
      ),
    ),
    ...(found.leftBehind.length > 0
      ? [insertFindings(deps.prisma, [leftBehindFinding(at.loopId, at.iterationId, found.leftBehind)])]
      : []),
    markInspected(deps.prisma, at.iterationId),
  ]);
  return inspectionFindings(deps, at.iterationId);
}

/** The check's stored findings (verification's own, VER-…, come later, in its result). */
async function inspectionFindings(deps: ActivityDeps, iterationId: string): Promise<FindingSummary[]> {
  return (await storedSystemFindings(deps, iterationId)).filter(
    (f) => !f.findingId.startsWith(VERIFICATION_FINDING_PREFIX),
  );
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
    failureScenario:
      'Had gates run on the working tree, these files would have changed what they checked; they run on a clean checkout, so they did not.',
    reproduction: 'git ls-files --others --ignored --exclude-standard --directory',
    concreteAlternativeDiff: 'Delete these files, or commit them if the change needs them.',
  };
}
