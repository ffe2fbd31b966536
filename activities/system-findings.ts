import type { GoalContract } from '../domain/contract';
import { signatureMaterial, type FindingSummary } from '../domain/ledger';
import type { ActivityDeps } from './deps';
import { inTransaction, type PendingWrite } from '../store/db';
import { insertFindings, systemFindings } from '../store/findings';
import { sanitise } from '../domain/sanitise';
import { sha256 } from './git';
import { RULE_HIDES, type SystemFinding } from '../analysis/tamper/types';

// Findings the system raises itself (docs/design.md §3.4): from the static tamper rules and from verification's
// frozen tests. VALID BLOCKERs unless the contract allows the change; each says which rule fired, where, and what it would have hidden.

/** Rules a contract flag turns from a blocker into a change shown to the reviewer and a person. */
const ALLOWED_BY: Partial<
  Record<SystemFinding['rule'], keyof Pick<GoalContract, 'allowTestChanges' | 'allowGateConfigChanges'>>
> = {
  TESTS_WEAKENED: 'allowTestChanges',
  TESTS_DELETED: 'allowTestChanges',
  TEST_DATA_CHANGED: 'allowTestChanges',
  TEST_WEAKENED: 'allowTestChanges',
  FEWER_TESTS_RUN: 'allowTestChanges',
  GATE_ENTRYPOINT_CHANGED: 'allowGateConfigChanges',
};

/** The Finding row for a system finding of one iteration. */
export function systemFindingRow(
  f: SystemFinding,
  at: {
    loopId: string;
    iterationId: string;
    findingId: string;
    baseCommit: string;
    checkpointCommit: string;
    contract: GoalContract;
  },
) {
  const allowed = ALLOWED_BY[f.rule] && at.contract[ALLOWED_BY[f.rule]!] === true;
  return {
    loopId: at.loopId,
    iterationId: at.iterationId,
    findingId: at.findingId,
    source: 'SYSTEM',
    rule: f.rule,
    signature: sha256(signatureMaterial(f)).slice(0, 16),
    // Both may quote lines of the diff or of a gate's output.
    title: sanitise(f.title),
    topic: f.topic,
    severity: allowed ? 'MEDIUM' : 'BLOCKER',
    validity: 'VALID',
    disposition: 'STRONG',
    location: f.location,
    acceptanceCriteria: ['GENERAL_REGRESSION'],
    evidence: sanitise(
      allowed ? `Allowed by the contract (${ALLOWED_BY[f.rule]}), shown for review.\n${f.evidence}` : f.evidence,
    ),
    failureScenario: `Had this gone unnoticed, ${RULE_HIDES[f.rule]}.`,
    reproduction: `git diff ${at.baseCommit}..${at.checkpointCommit} -- ${f.location.file}`,
    concreteAlternativeDiff: `Revert the change to ${f.location.file} and meet the contract without it.`,
  };
}

/** Verification's own findings are numbered apart from the tamper rules' (TMP-…) of the same iteration. */
export const VERIFICATION_FINDING_PREFIX = 'VER-';

/**
 * Stores verification's system findings for an iteration, in one transaction with `alongside` (the
 * iteration's verified mark), and returns what the workflow keeps of them.
 */
export async function storeSystemFindings(
  deps: ActivityDeps,
  at: {
    loopId: string;
    iterationId: string;
    baseCommit: string;
    checkpointCommit: string;
    contract: GoalContract;
    findings: SystemFinding[];
  },
  alongside: PendingWrite[] = [],
): Promise<FindingSummary[]> {
  await inTransaction(deps.prisma, [
    insertFindings(
      deps.prisma,
      at.findings.map((f, i) =>
        systemFindingRow(f, { ...at, findingId: `${VERIFICATION_FINDING_PREFIX}${String(i + 1).padStart(3, '0')}` }),
      ),
    ),
    ...alongside,
  ]);
  return storedSystemFindings(deps, at.iterationId, VERIFICATION_FINDING_PREFIX);
}

/** An iteration's stored system findings whose ids start with `prefix`, as the workflow keeps them. */
export async function storedSystemFindings(
  deps: ActivityDeps,
  iterationId: string,
  prefix = '',
): Promise<FindingSummary[]> {
  const stored = await systemFindings(deps.prisma, iterationId, prefix);
  return stored.map((f) => ({
    findingId: f.findingId,
    title: f.title,
    topic: f.topic as FindingSummary['topic'],
    severity: f.severity as FindingSummary['severity'],
    validity: 'VALID',
    location: f.location as FindingSummary['location'],
    acceptanceCriteria: ['GENERAL_REGRESSION'],
    signature: f.signature,
    source: 'SYSTEM',
  }));
}
