import type { LoopPhase, LoopStatus } from '../domain/loop-state';
import { TERMINAL_STATUSES } from '../domain/loop-state';
import type { ActivityDeps } from './deps';

export interface ProgressInput {
  loopId: string;
  status: LoopStatus;
  phase: LoopPhase;
  roundIteration: number;
  lastVerdict: string | null;
  failureReason: string | null;
}

/** Mirrors the workflow's state into the read model the API serves. */
export async function recordProgress(deps: ActivityDeps, input: ProgressInput): Promise<void> {
  // A loop that ends cancelled or failed while a human was asked closes that question with it,
  // so inboxes never list a decision nobody can make any more.
  if (input.status === 'CANCELLED' || input.status === 'FAILED') {
    await deps.prisma.escalation.updateMany({ where: { loopId: input.loopId, status: 'OPEN' }, data: { status: input.status } });
  }
  await deps.prisma.loop.update({
    where: { id: input.loopId },
    data: {
      status: input.status,
      phase: input.phase,
      roundIteration: input.roundIteration,
      lastVerdict: input.lastVerdict,
      ...(input.failureReason ? { failureReason: input.failureReason } : {}),
      ...(TERMINAL_STATUSES.includes(input.status) ? { finishedAt: new Date() } : {}),
    },
  });
}
