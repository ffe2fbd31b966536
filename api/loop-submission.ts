import { randomUUID, createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { Prisma, type PrismaClient } from '../prisma/client';
import { canonicalJson } from '../domain/contract';
import { loopWorkflowId, type LoopInput, type LoopRequest } from '../domain/loop-request';
import { LoopPhaseKey, LoopRepoKey, LoopStatusKey } from '../workflows/search-attributes';
import { conflict } from './errors';

export interface SubmissionDeps {
  prisma: PrismaClient;
  temporal: Client;
  taskQueue: string;
}

type LoopRow = Awaited<ReturnType<PrismaClient['loop']['findUniqueOrThrow']>>;

/**
 * Records a loop and starts its workflow. The same Idempotency-Key returns the same loop (and starts its
 * workflow if an earlier attempt recorded the loop but could not reach Temporal); a key reused with a
 * different request is a conflict. The submitting API key is kept for separation of duties.
 */
export async function submitLoop(
  deps: SubmissionDeps,
  request: LoopRequest,
  idempotencyKey: string | undefined,
  submittedByKeyId: string,
): Promise<{ loop: LoopRow; created: boolean }> {
  const requestHash = createHash('sha256').update(canonicalJson(request)).digest('hex');
  if (idempotencyKey) {
    const existing = await deps.prisma.loop.findUnique({ where: { idempotencyKey } });
    if (existing) return { loop: await replay(deps, existing, requestHash, request), created: false };
  }
  const id = randomUUID();
  let loop: LoopRow;
  try {
    loop = await deps.prisma.loop.create({
      data: {
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
      },
    });
  } catch (err) {
    // Two concurrent requests with one key: the loser returns the winner's loop.
    if (idempotencyKey && err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      const winner = await deps.prisma.loop.findUniqueOrThrow({ where: { idempotencyKey } });
      return { loop: await replay(deps, winner, requestHash, request), created: false };
    }
    throw err;
  }
  await startWorkflow(deps, loop, request);
  return { loop, created: true };
}

async function replay(deps: SubmissionDeps, loop: LoopRow, requestHash: string, request: LoopRequest): Promise<LoopRow> {
  if (loop.requestHash !== requestHash) throw conflict('this Idempotency-Key was already used with a different request');
  if (loop.status === 'QUEUED') await startWorkflow(deps, loop, request);
  return loop;
}

async function startWorkflow(deps: SubmissionDeps, loop: LoopRow, request: LoopRequest): Promise<void> {
  const input: LoopInput = { loopId: loop.id, request };
  try {
    await deps.temporal.workflow.start('engineeringLoop', {
      taskQueue: deps.taskQueue,
      workflowId: loop.workflowId,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [input],
      staticSummary: `Loop ${loop.id}: ${request.contract.objective.slice(0, 200)}`,
      typedSearchAttributes: [
        { key: LoopRepoKey, value: request.repository.url.slice(0, 1000) },
        { key: LoopStatusKey, value: 'QUEUED' },
        { key: LoopPhaseKey, value: 'QUEUED' },
      ],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
