import { createHash } from 'node:crypto';
import type { LoopActivities } from '../../../activities';
import type { GatePlan, GateName, GateSummary } from '../../../domain/gates';
import type { FindingSummary } from '../../../domain/ledger';
import { NO_SETUP } from '../../../domain/setup';
import type { Usage } from '../../../domain/budget';

// What the real activities return, built from their own types: a change of shape fails to compile here.

export type ResultOf<K extends keyof LoopActivities> = Awaited<ReturnType<LoopActivities[K]>>;
export type MakerOutcome = ResultOf<'runMaker'>;
export type VerificationOutcome = ResultOf<'runVerification'>;
export type ReviewOutcome = ResultOf<'runReview'>;
export type SetupOutcome = ResultOf<'runWorkspaceSetup'>;

const hex = (text: string, algorithm = 'sha256') => createHash(algorithm).update(text).digest('hex');

/** The checkpoint commit iteration #`sequence` ends on. */
export const checkpointOf = (sequence: number) => hex(`checkpoint ${sequence}`, 'sha1');

/** The plan prepareWorkspace resolves for the request's tests gate (no set-up commands). */
export const GATE_PLAN: GatePlan = {
  gates: [
    {
      gate: 'tests',
      argv: ['node', '--test'],
      timeoutSeconds: 120,
      source: 'contract',
      detail: 'the request\'s "gates"',
    },
  ],
  profile: 'library',
  notes: [],
  warnings: [],
  network: false,
  setup: NO_SETUP,
};

/** The same plan with a dependency install before the maker (a package-lock.json in the repository). */
export const GATE_PLAN_WITH_SETUP: GatePlan = {
  ...GATE_PLAN,
  setup: {
    ...NO_SETUP,
    commands: [
      { argv: ['npm', 'ci'], timeoutSeconds: 600, source: 'manifest-inference', detail: 'package-lock.json (npm ci)' },
    ],
    outputs: ['node_modules'],
  },
};

/** A command maker's iteration that changed src/sum.js and was checked for tampering (nothing found). */
export function made(sequence: number, overrides: Partial<MakerOutcome> = {}): MakerOutcome {
  return {
    sequence,
    usage: { tokens: 0, costUsd: 0, agentMs: 4_000 },
    agentReport: null,
    checkpointCommit: checkpointOf(sequence),
    diffHash: hex(`diff after ${sequence}`),
    changedFiles: ['src/sum.js'],
    noChange: false,
    cumulativeDiffEmpty: false,
    exitCode: 0,
    timeoutStatus: 'COMPLETED',
    inspected: [],
    ...overrides,
  };
}

export function passedGate(gate: GateName, sequence: number, provesAcceptanceCriteria: string[] = []): GateSummary {
  return {
    gate,
    status: 'PASSED',
    evidenceId: `evidence-${sequence}-${gate}`,
    exitCode: 0,
    timeoutStatus: 'COMPLETED',
    testCounts: gate === 'tests' ? { passed: 3, failed: 0, skipped: 0 } : null,
    failureReason: null,
    failureSignature: null,
    provesAcceptanceCriteria,
    environmentProblem: null,
  };
}

/** A gate that ran and failed; `signature` tells failures apart (the same one twice in a row escalates). */
export function failedGate(
  gate: GateName,
  sequence: number,
  failureReason: string,
  signature = hex(failureReason).slice(0, 16),
): GateSummary {
  return {
    ...passedGate(gate, sequence),
    status: 'FAILED',
    exitCode: 1,
    testCounts: gate === 'tests' ? { passed: 2, failed: 1, skipped: 0 } : null,
    failureReason,
    failureSignature: signature,
  };
}

/** Verification of the request's contract: the tests gate proves AC-2, the named test AC-1. */
export function verified(
  sequence: number,
  { gates, ac1 = 'PASSED' }: { gates?: GateSummary[]; ac1?: 'PASSED' | 'FAILED' } = {},
): VerificationOutcome {
  return {
    gates: gates ?? [passedGate('tests', sequence, ['AC-2'])],
    acceptanceChecks: [{ acId: 'AC-1', status: ac1, evidenceId: `evidence-${sequence}-ac-1` }],
    environmentProblem: null,
    systemFindings: [],
  };
}

/** A verification whose tests gate failed (no acceptance check ran after it). */
export function gateFailed(
  sequence: number,
  failureReason = 'sum adds two numbers: expected 3, got -1',
  gates: GateSummary[] = [],
): VerificationOutcome {
  return {
    gates: [failedGate('tests', sequence, failureReason), ...gates],
    acceptanceChecks: [],
    environmentProblem: null,
    systemFindings: [],
  };
}

/** A verification whose checkout could not be set up: no gate ran. */
export function checkoutSetupFailed(problem: string): VerificationOutcome {
  return { gates: [], acceptanceChecks: [], environmentProblem: problem, systemFindings: [] };
}

/** A completed review with these findings. */
export function reviewed(
  findings: FindingSummary[] = [],
  usage: Usage = { tokens: 1_800, costUsd: 0.004, agentMs: 0 },
): ReviewOutcome {
  return { outcome: { status: 'COMPLETED', findings, responseIds: ['resp_review_1'] }, usage };
}

/** A reviewer's VALID HIGH finding: blocking. */
export function reviewerBlocker(findingId = 'COR-001'): FindingSummary {
  return {
    findingId,
    title: 'sum ignores its second argument',
    topic: 'correctness',
    severity: 'HIGH',
    validity: 'VALID',
    location: { file: 'src/sum.js', startLine: 1, endLine: 3 },
    acceptanceCriteria: ['AC-1'],
    signature: hex(`correctness|src/sum.js|${findingId}`).slice(0, 16),
    source: 'REVIEWER',
  };
}

/** A tamper finding the system raised: a VALID BLOCKER, as systemFindingRow stores it. */
export function systemBlocker(findingId = 'TMP-001'): FindingSummary {
  return {
    findingId,
    title: 'A test assertion was removed',
    topic: 'testing_gaps',
    severity: 'BLOCKER',
    validity: 'VALID',
    location: { file: 'test/sum.test.js', startLine: 4, endLine: 6 },
    acceptanceCriteria: ['GENERAL_REGRESSION'],
    signature: hex(`testing_gaps|test/sum.test.js|${findingId}`).slice(0, 16),
    source: 'SYSTEM',
  };
}
