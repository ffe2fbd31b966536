import type { Usage } from '../../domain/budget';
import type { ProjectProfile } from '../../domain/gates';
import type { ReviewerSettings } from '../../domain/loop-request';
import type { ReviewCoverage, ReviewOutcome } from '../../domain/judge';
import {
  describeUnreviewed,
  generatedRules,
  reviewScope,
  type Exclusion,
  type FileDiff,
} from '../../domain/review-scope';
import { signatureMaterial, type Finding, type FindingSummary } from '../../domain/ledger';
import { sanitise } from '../../domain/sanitise';
import { loadContract } from '../contract';
import { assertGivenCheckpoint, preparedLoop } from '../prepared-workspace';
import { early, inOrder } from '../in-order';
import type { ActivityDeps } from '../deps';
import { inTransaction, type PendingWrite } from '../../store/db';
import { insertFindings } from '../../store/findings';
import { iterationWithGateResults, markReviewed } from '../../store/iterations';
import { touchesSetupInputs } from '../../domain/setup';
import { sha256 } from '../git';
import { changedNames } from '../../analysis/tamper/change-set';
import { readAt, reviewDiff } from '../tamper/change-set';
import { recordedUsage } from '../usage';
import type { ChatMessage } from './chat-completions';
import { reviewWithAgent } from './agent-review';
import { parseLedger } from './parse-ledger';
import { buildReviewMessages } from './review-prompt';
import { reviewTopics } from './review-topics';
import { askForStructuredAnswer } from './structured-answer';
import { frozenTestsForReview } from './frozen-tests-for-review';
import { triageFindings, type TriageResult } from './triage';

export interface ReviewInput {
  loopId: string;
  sequence: number;
  contractVersion: number;
  reviewer: ReviewerSettings;
  /** Chooses the review's focus topics. */
  profile: ProjectProfile | null;
  priorSignatures: string[];
  /** The maker's checkpoint, as its result gave it (the iteration's row must name the same commit). */
  checkpointCommit: string;
}

export interface ReviewResult {
  outcome: ReviewOutcome;
  usage: Usage;
}

/**
 * Asks the reviewer model for a finding ledger, re-asking with the validation errors a bounded number
 * of times. Idempotent per (loop, sequence): a finished review returns its stored outcome.
 */
export async function runReview(
  deps: ActivityDeps,
  input: ReviewInput,
  reads: ReviewReads = startReviewReads(deps, input),
): Promise<ReviewResult> {
  // The model calls' records are written while the review goes on (finish waits for them); the usage is
  // summed beside the review's final write.
  const calls: ReviewCalls = {
    recording: [],
    usage: () => recordedUsage(deps, input.loopId, input.sequence, ['reviewer', 'triage']),
  };
  const [outcome, spent] = await reviewOnce(deps, input, reads, calls);
  return { outcome, usage: spent };
}

/** What a review reads that no gate's result changes: the contract, the loop, the diff and what it touches. */
export type ReviewReads = ReturnType<typeof startReviewReads>;

/**
 * Starts the review's reads that need no gate's result (a verification that reviews in place starts them
 * beside its gates). Read together; given the checkpoint, the diff is read with them.
 */
export function startReviewReads(
  deps: ActivityDeps,
  input: Pick<ReviewInput, 'loopId' | 'contractVersion' | 'checkpointCommit'>,
) {
  const contract = early(loadContract(deps, input.loopId, input.contractVersion));
  const prepared = early(preparedLoop(deps, input.loopId));
  const { checkpointCommit } = input;
  const diff = early(prepared.then((loop) => reviewDiff(loop.workspacePath, loop.baseCommit, checkpointCommit)));
  // The base's generated-file rules, and the frozen tests the change touches, are read beside the diff.
  const attributes = early(prepared.then((loop) => readAt(loop.workspacePath, loop.baseCommit, '.gitattributes')));
  const frozenTests = early(
    inOrder([prepared, diff, contract]).then(([loop, changed, frozen]) =>
      frozenTestsForReview(loop.workspacePath, loop.baseCommit, changed.paths, frozen.contract),
    ),
  );
  return { contract, prepared, diff, attributes, frozenTests };
}

async function reviewOnce(
  deps: ActivityDeps,
  input: ReviewInput,
  { contract, prepared, diff: earlyDiff, attributes, frozenTests }: ReviewReads,
  calls: ReviewCalls,
): Promise<[ReviewOutcome, Usage]> {
  const { checkpointCommit } = input;
  const { recording, usage } = calls;
  const [loop, iteration] = await inOrder([
    prepared,
    // Only what the verification summary quotes: evidence rows carry the gates' whole output.
    iterationWithGateResults(deps.prisma, input.loopId, input.sequence),
  ]);
  assertGivenCheckpoint(input.loopId, input.sequence, checkpointCommit, iteration.checkpointCommit);
  if (iteration.reviewedAt && iteration.reviewOutcome)
    return inOrder([Promise.resolve(iteration.reviewOutcome as unknown as ReviewOutcome), usage()]);

  const frozen = await contract;
  // One git call for the diff text and the files it covers.
  const diff = await earlyDiff;
  // Sanitised before it is cut into parts, so no cut can shorten a token below the length its pattern needs.
  const fullDiff = sanitise(diff.patch);
  const changed = changedNames(diff.paths);
  const scope = reviewScope(
    fileSections(fullDiff, changed),
    generatedRules((await attributes) ?? ''),
    deps.config.review,
  );
  if (scope.kind === 'TOO_LARGE') {
    return finish(deps, iteration.id, calls, {
      status: 'INCOMPLETE',
      reason: `${scope.reason}; not reviewed: ${describeUnreviewed(scope.unreviewed)}`,
    });
  }
  const context = {
    frozen,
    excluded: scope.excluded,
    verificationSummary: iteration.evidence.map(
      (e) =>
        `- ${e.gate}: ${e.status} (exit code ${e.exitCode ?? '—'}${e.testCounts ? `, tests ${JSON.stringify(e.testCounts)}` : ''})`,
    ),
    priorSignatures: input.priorSignatures,
    focusTopics: reviewTopics(input.profile),
    dependencyChanges: changed.filter((file) => touchesSetupInputs([file])),
    frozenTests: await frozenTests,
  };
  // Triage is always a model call; the review itself may be one or an agent CLI.
  const model = (input.reviewer.backend === 'llm' ? input.reviewer.model : undefined) ?? deps.config.llm.model;
  const ask = (messages: ChatMessage[]) =>
    input.reviewer.backend === 'agent'
      ? reviewWithAgent(deps, {
          loopId: input.loopId,
          sequence: input.sequence,
          workspace: loop.workspacePath,
          checkpointCommit: checkpointCommit,
          agent: input.reviewer.agent,
          messages,
        })
      : askForStructuredAnswer(deps, {
          loopId: input.loopId,
          sequence: input.sequence,
          role: 'reviewer',
          model,
          messages,
          parse: (content) => {
            const parsed = parseLedger(content);
            return parsed.ok ? { ok: true, value: parsed.ledger } : parsed;
          },
          outcomes: { valid: 'VALID_LEDGER', invalid: 'INVALID_LEDGER' },
          recording,
        });
  // An empty diff (every change excluded, or none) is still one review: of the contract and the gates.
  const parts = scope.parts.length > 0 ? scope.parts : [{ diff: '', files: [] }];
  const ledgers: Finding[][] = [];
  const responseIds: string[] = [];
  for (const [i, part] of parts.entries()) {
    const messages = buildReviewMessages({
      ...context,
      diff: part.diff,
      part: parts.length > 1 ? { index: i + 1, count: parts.length, files: part.files } : null,
    });
    const answer = await ask(messages);
    if (!answer.ok) {
      const where = parts.length > 1 ? ` (part ${i + 1} of ${parts.length})` : '';
      return finish(deps, iteration.id, calls, {
        status: 'FAILED',
        reason: sanitise(
          `the reviewer's ledger${where} was still invalid after ${deps.config.llm.repairAttempts} repair attempt(s): ${answer.errors.slice(0, 5).join('; ')}`,
        ),
      });
    }
    ledgers.push(answer.value.findings);
    responseIds.push(...answer.responseIds);
  }
  const findings = mergeLedgers(ledgers).map(sanitiseFinding);
  const triaged = await triageFindings(deps, {
    loopId: input.loopId,
    sequence: input.sequence,
    model,
    workspace: loop.workspacePath,
    checkpointCommit: checkpointCommit,
    diff: fullDiff,
    findings,
    recording,
  });
  const stored = reviewerFindings(deps, iteration.id, input.loopId, findings, triaged);
  return finish(
    deps,
    iteration.id,
    calls,
    {
      status: 'COMPLETED',
      findings: stored.summaries,
      responseIds,
      coverage: { parts: scope.parts.length, excluded: excludedByRule(scope.excluded) },
    },
    [stored.write],
  );
}

/**
 * Each file's `diff --git` section of the review's diff, named as the raw part of the same git call
 * names it: one section per path, in the same order (content lines never begin with "diff --git").
 */
function fileSections(patch: string, files: string[]): FileDiff[] {
  const sections = patch.split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git '));
  if (sections.length !== files.length)
    throw new Error(`the review diff has ${sections.length} file sections for ${files.length} changed paths`);
  return sections.map((text, i) => ({ file: files[i]!, text }));
}

/** One ledger from the parts' ledgers: an id two parts both used is renumbered in the later one. */
function mergeLedgers(ledgers: Finding[][]): Finding[] {
  const used = new Set<string>();
  const merged: Finding[] = [];
  for (const ledger of ledgers) {
    for (const f of ledger) {
      let id = f.id;
      for (let n = 1; used.has(id); n++) id = `${f.id.slice(0, 4)}${String(900 + n).padStart(3, '0')}`;
      used.add(id);
      merged.push({ ...f, id });
    }
  }
  return merged;
}

const EXCLUSION_SAMPLE = 5;

function excludedByRule(excluded: Exclusion[]): ReviewCoverage['excluded'] {
  const byRule = new Map<string, string[]>();
  for (const e of excluded) {
    const files = byRule.get(e.rule) ?? [];
    files.push(e.file);
    byRule.set(e.rule, files);
  }
  return [...byRule].map(([rule, files]) => ({ rule, files: files.length, sample: files.slice(0, EXCLUSION_SAMPLE) }));
}

/** The judge's summaries of the reviewer's findings, and their rows' write (run in finish's transaction). */
function reviewerFindings(
  deps: ActivityDeps,
  iterationId: string,
  loopId: string,
  findings: Finding[],
  triage: TriageResult,
) {
  // The judge sees the triaged validity; the reviewer's claim and the triage reasoning are kept.
  const summaries = findings.map((f): FindingSummary => ({
    findingId: f.id,
    title: f.title,
    topic: f.topic,
    severity: f.severity,
    validity: triage.get(f.id)?.validity ?? f.validity,
    location: f.location,
    acceptanceCriteria: f.acceptanceCriteria,
    signature: sha256(signatureMaterial(f)).slice(0, 16),
    source: 'REVIEWER',
  }));
  const write = insertFindings(
    deps.prisma,
    findings.map((f, i) => ({
      loopId,
      iterationId,
      findingId: f.id,
      source: 'REVIEWER',
      signature: summaries[i]!.signature,
      title: f.title,
      topic: f.topic,
      severity: f.severity,
      validity: summaries[i]!.validity,
      claimedValidity: f.validity,
      triageReasoning: sanitiseOptional(triage.get(f.id)?.reasoning),
      triageCounterEvidence: sanitiseOptional(triage.get(f.id)?.counterEvidence),
      disposition: f.disposition,
      location: f.location,
      acceptanceCriteria: f.acceptanceCriteria,
      evidence: f.evidence,
      failureScenario: f.failureScenario,
      reproduction: f.reproduction,
      concreteAlternativeDiff: f.concreteAlternativeDiff ?? null,
    })),
  );
  return { summaries, write };
}

/** A model's finding may quote secrets from the diff or the repository; it is stored and shown to people. */
function sanitiseFinding(f: Finding): Finding {
  return {
    ...f,
    title: sanitise(f.title),
    evidence: sanitise(f.evidence),
    failureScenario: sanitise(f.failureScenario),
    reproduction: sanitise(f.reproduction),
    concreteAlternativeDiff: f.concreteAlternativeDiff && sanitise(f.concreteAlternativeDiff),
  };
}

function sanitiseOptional(text: string | null | undefined): string | null {
  return text ? sanitise(text) : null;
}

/** The review's model calls: their records while they are written, and what the recorded ones spent. */
interface ReviewCalls {
  recording: Promise<unknown>[];
  usage: () => Promise<Usage>;
}

/**
 * Marks the iteration reviewed, in one transaction with `writes` (the findings): a retry finds both or
 * neither. The review's usage is read meanwhile.
 */
async function finish(
  deps: ActivityDeps,
  iterationId: string,
  { recording, usage }: ReviewCalls,
  outcome: ReviewOutcome,
  writes: PendingWrite[] = [],
): Promise<[ReviewOutcome, Usage]> {
  // Every call is recorded before the review counts as done: a retry that finds it done sums them all.
  await inOrder(recording);
  const [, spent] = await inOrder([
    inTransaction(deps.prisma, [...writes, markReviewed(deps.prisma, iterationId, outcome as object)]),
    usage(),
  ]);
  return [outcome, spent];
}
