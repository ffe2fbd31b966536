import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ReviewOutcome } from '../../domain/judge';
import { signatureMaterial, type Finding, type FindingSummary } from '../../domain/ledger';
import { loadContract } from '../contract';
import type { ActivityDeps } from '../deps';
import { recordExecution } from '../execution-records';
import { diffText, sha256 } from '../git';
import { whileHeartbeating } from '../heartbeat';
import { createChatCompletion, ProviderError, type ChatMessage } from './chat-completions';
import { parseLedger } from './parse-ledger';
import { buildRepairMessage, buildReviewMessages } from './review-prompt';

export interface ReviewInput {
  loopId: string;
  sequence: number;
  contractVersion: number;
  model: string | null;
  priorSignatures: string[];
}

const MAX_DIFF_CHARS = 200_000;

/**
 * Asks the reviewer model for a finding ledger, re-asking with the validation errors a bounded number
 * of times. Idempotent per (loop, sequence): a finished review returns its stored outcome.
 */
export async function runReview(deps: ActivityDeps, input: ReviewInput): Promise<ReviewOutcome> {
  const loop = await deps.prisma.loop.findUniqueOrThrow({ where: { id: input.loopId } });
  const iteration = await deps.prisma.iteration.findUniqueOrThrow({
    where: { loopId_sequence: { loopId: input.loopId, sequence: input.sequence } },
    include: { evidence: { orderBy: { gateOrder: 'asc' } } },
  });
  if (iteration.reviewedAt && iteration.reviewOutcome) return iteration.reviewOutcome as unknown as ReviewOutcome;

  const frozen = await loadContract(deps, input.loopId, input.contractVersion);
  const fullDiff = await diffText(loop.workspacePath!, loop.baseCommit!, iteration.checkpointCommit!);
  const messages: ChatMessage[] = buildReviewMessages({
    frozen,
    diff: fullDiff.slice(0, MAX_DIFF_CHARS),
    diffTruncated: fullDiff.length > MAX_DIFF_CHARS,
    verificationSummary: iteration.evidence.map(
      (e) => `- ${e.gate}: ${e.status} (exit code ${e.exitCode ?? '—'}${e.testCounts ? `, tests ${JSON.stringify(e.testCounts)}` : ''})`,
    ),
    priorSignatures: input.priorSignatures,
  });
  const model = input.model ?? deps.config.llm.model;
  const responseIds: string[] = [];
  let errors: string[] = [];

  for (let attempt = 0; attempt <= deps.config.llm.repairAttempts; attempt++) {
    const completion = await callModel(deps, input, model, messages);
    const parsed = parseLedger(completion.content);
    await recordExecution(deps, {
      loopId: input.loopId,
      iterationSeq: input.sequence,
      role: 'reviewer',
      kind: 'MODEL_CALL',
      provider: 'openai-compatible',
      model: completion.model,
      responseId: completion.responseId,
      requestId: completion.requestId,
      promptTokens: completion.promptTokens,
      completionTokens: completion.completionTokens,
      latencyMs: completion.latencyMs,
      outcome: parsed.ok ? 'VALID_LEDGER' : 'INVALID_LEDGER',
      detail: parsed.ok ? null : parsed.errors.join('\n').slice(0, 4000),
    });
    if (completion.responseId) responseIds.push(completion.responseId);
    if (parsed.ok) {
      const findings = await storeFindings(deps, iteration.id, input.loopId, parsed.ledger.findings);
      return finish(deps, iteration.id, { status: 'COMPLETED', findings, responseIds });
    }
    errors = parsed.errors;
    messages.push({ role: 'assistant', content: completion.content }, buildRepairMessage(errors));
  }
  return finish(deps, iteration.id, {
    status: 'FAILED',
    reason: `the reviewer's ledger was still invalid after ${deps.config.llm.repairAttempts} repair attempt(s): ${errors.slice(0, 5).join('; ')}`,
  });
}

async function callModel(deps: ActivityDeps, input: ReviewInput, model: string, messages: ChatMessage[]) {
  const ctx = Context.current();
  try {
    return await whileHeartbeating(
      createChatCompletion({
        baseUrl: deps.config.llm.baseUrl,
        apiKey: deps.config.llm.apiKey,
        model,
        messages,
        timeoutMs: deps.config.llm.timeoutSeconds * 1000,
        signal: ctx.cancellationSignal,
      }),
      { phase: 'review', sequence: input.sequence },
    );
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    await recordExecution(deps, {
      loopId: input.loopId,
      iterationSeq: input.sequence,
      role: 'reviewer',
      kind: 'MODEL_CALL',
      provider: 'openai-compatible',
      model,
      latencyMs: 0,
      outcome: err.status ? `HTTP_${err.status}` : 'UNREACHABLE',
      detail: err.message.slice(0, 4000),
    });
    // 429 and 5xx are retried by the activity retry policy; 401/403/4xx cannot be fixed by retrying.
    throw ApplicationFailure.create({ type: 'ReviewerProviderError', message: err.message, nonRetryable: !err.retryable });
  }
}

async function storeFindings(
  deps: ActivityDeps,
  iterationId: string,
  loopId: string,
  findings: Finding[],
): Promise<FindingSummary[]> {
  const summaries = findings.map(
    (f): FindingSummary => ({
      findingId: f.id,
      title: f.title,
      topic: f.topic,
      severity: f.severity,
      validity: f.validity,
      location: f.location,
      acceptanceCriteria: f.acceptanceCriteria,
      signature: sha256(signatureMaterial(f)).slice(0, 16),
      source: 'REVIEWER',
    }),
  );
  await deps.prisma.finding.createMany({
    data: findings.map((f, i) => ({
      loopId,
      iterationId,
      findingId: f.id,
      source: 'REVIEWER',
      signature: summaries[i]!.signature,
      title: f.title,
      topic: f.topic,
      severity: f.severity,
      validity: f.validity,
      disposition: f.disposition,
      location: f.location,
      acceptanceCriteria: f.acceptanceCriteria,
      evidence: f.evidence,
      failureScenario: f.failureScenario,
      reproduction: f.reproduction,
      concreteAlternativeDiff: f.concreteAlternativeDiff ?? null,
    })),
    skipDuplicates: true,
  });
  return summaries;
}

async function finish(deps: ActivityDeps, iterationId: string, outcome: ReviewOutcome): Promise<ReviewOutcome> {
  await deps.prisma.iteration.update({
    where: { id: iterationId },
    data: { reviewedAt: new Date(), reviewOutcome: outcome as object },
  });
  return outcome;
}
