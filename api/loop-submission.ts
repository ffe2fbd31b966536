import { randomUUID, createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { canonicalJson } from '../domain/contract';
import { loopWorkflowId, type LoopInput, type LoopRequest } from '../domain/loop-request';
import type { engineeringLoop } from '../workflows';
import { LoopPhaseKey, LoopRepoKey, LoopStatusKey } from '../workflows/search-attributes';
import { conflict } from './errors';
import type { PrismaClient } from '../store/db';
import { insertLoop, loopByIdempotencyKey, withdrawQueuedLoop } from '../store/loops';
import { bindFirstRun as bindRun } from '../store/run-binding';
import type { LoopRow } from './load-loop';
import { callTemporal, TEMPORAL_RETRY_AFTER_SECONDS } from './temporal-calls';

export interface SubmissionDeps {
  prisma: PrismaClient;
  temporal: Client;
  taskQueue: string;
}

/**
 * Records a loop and starts its workflow. A loop whose start fails is withdrawn (503 when Temporal cannot
 * be reached), so no row is left that nothing will start, and sending the request again submits it once.
 * The same Idempotency-Key returns the same loop (and starts its workflow if it is still QUEUED); a key
 * reused with a different request is a conflict. The submitting API key is kept for separation of duties.
 */
export async function submitLoop(
  deps: SubmissionDeps,
  request: LoopRequest,
  idempotencyKey: string | undefined,
  submittedByKeyId: string,
): Promise<{ loop: LoopRow; created: boolean }> {
  const requestHash = createHash('sha256').update(canonicalJson(request)).digest('hex');
  if (idempotencyKey) {
    const existing = await loopByIdempotencyKey(deps.prisma, idempotencyKey);
    if (existing) return { loop: await replay(deps, existing, requestHash, request), created: false };
  }
  const id = randomUUID();
  const inserted = await insertLoop(deps.prisma, {
    id,
    workflowId: loopWorkflowId(id),
    idempotencyKey: idempotencyKey ?? null,
    requestHash,
    status: 'QUEUED',
    phase: 'QUEUED',
    repoUrl: request.repository.url,
    baseRef: request.repository.baseRef,
    maxIterations: request.maxIterations,
    input: request as object,
    submittedByKeyId,
  });
  // Two concurrent requests with one key: the loser returns the winner's loop.
  if (!inserted.created) return { loop: await replay(deps, inserted.loop, requestHash, request), created: false };
  const { loop } = inserted;
  try {
    await startWorkflow(deps, loop, request);
  } catch (err) {
    // Only while still QUEUED: if the start reached Temporal after all and its workflow has moved the loop
    // on, the loop stays. If it reached Temporal but the row is gone, the workflow's first step (recording
    // PREPARING) finds no row and the run fails there, before any work.
    await withdrawQueuedLoop(deps.prisma, loop.id);
    throw err;
  }
  return { loop, created: true };
}

async function replay(
  deps: SubmissionDeps,
  loop: LoopRow,
  requestHash: string,
  request: LoopRequest,
): Promise<LoopRow> {
  if (loop.requestHash !== requestHash)
    throw conflict('this Idempotency-Key was already used with a different request');
  if (loop.status === 'QUEUED') await startWorkflow(deps, loop, request);
  return loop;
}

async function startWorkflow(deps: SubmissionDeps, loop: LoopRow, request: LoopRequest): Promise<void> {
  const input: LoopInput = { loopId: loop.id, request };
  const notStarted = `the loop was not started; send the same request again (with its Idempotency-Key, if any) in ${TEMPORAL_RETRY_AFTER_SECONDS} s`;
  try {
    // Typed by the workflow function, named by its string: `import type` keeps workflow code out of the API process.
    const started = await callTemporal(deps.temporal, notStarted, () =>
      deps.temporal.workflow.start<typeof engineeringLoop>('engineeringLoop', {
        taskQueue: deps.taskQueue,
        workflowId: loop.workflowId,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        args: [input],
        staticSummary: `Loop ${loop.id}: ${request.contract.objective.slice(0, 200)}`,
        staticDetails: staticDetails(request),
        typedSearchAttributes: [
          { key: LoopRepoKey, value: keywordValue(request.repository.url) },
          { key: LoopStatusKey, value: 'QUEUED' },
          { key: LoopPhaseKey, value: 'QUEUED' },
        ],
      }),
    );
    // The run the API started is the loop's own (activities/run-binding.ts). Its first activity binds it
    // too, so a failed write here must not fail a submission whose workflow runs.
    await bindRun(deps.prisma, loop.workflowId, started.firstExecutionRunId).catch(() => undefined);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Temporal refuses a keyword search attribute whose encoded value exceeds 2048 bytes (a start with one is an
 * INVALID_ARGUMENT, which was a 500): the first 1000 UTF-8 bytes, cut between characters, stay under it
 * whatever the characters — JSON escapes at most double a URL, which has no control characters.
 */
export const KEYWORD_VALUE_MAX_BYTES = 1000;
export function keywordValue(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= KEYWORD_VALUE_MAX_BYTES) return text;
  let end = KEYWORD_VALUE_MAX_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--; // not inside a multi-byte character
  return bytes.subarray(0, end).toString('utf8');
}

/** What the Temporal UI shows under the summary: where the loop works and what it must achieve (Markdown). */
function staticDetails(request: LoopRequest): string {
  const c = request.contract;
  return [
    `**Repository** ${request.repository.url.slice(0, 500)} @ ${request.repository.baseRef ?? 'default branch'}`,
    `**Maker** ${request.maker.backend}, at most ${request.maxIterations ?? 'the default number of'} iteration(s)`,
    `**Outcome** ${c.outcome.slice(0, 500)}`,
    '**Acceptance criteria**',
    ...c.acceptanceCriteria.slice(0, 20).map((ac) => `- ${ac.id}: ${ac.statement.slice(0, 300)}`),
  ].join('\n');
}
