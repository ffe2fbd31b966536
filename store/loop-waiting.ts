import { TERMINAL_STATUSES } from '../domain/loop-state';
import type { PrismaClient } from './db';

// What a loop waits for while its step's attempts meet an outage of the model provider, which they outlast
// without limit (activities/retry-classes.ts): shown in GET /v1/loops/:id, so a loop that seems stuck
// says why, and a wrong LLM_BASE_URL shows as such instead of as a slow review. Cleared when the step
// succeeds, and by the loop's next move (store/progress.ts).

/** Notes that the loop's current step waits for `reason`; `waitingSince` keeps the outage's first attempt. */
export async function markWaiting(db: PrismaClient, loopId: string, reason: string): Promise<void> {
  const at = new Date().toISOString();
  await db.$executeRaw`
    UPDATE "Loop" SET
      "waitingFor" = ${reason},
      "waitingSince" = COALESCE("waitingSince", ${at}::timestamptz AT TIME ZONE 'UTC')
    WHERE "id" = ${loopId} AND "status" <> ALL (${[...TERMINAL_STATUSES]}::text[])`;
}

/** The step got through: the loop waits for nothing. */
export async function clearWaiting(db: PrismaClient, loopId: string): Promise<void> {
  await db.loop.updateMany({
    where: { id: loopId, OR: [{ waitingFor: { not: null } }, { waitingSince: { not: null } }] },
    data: { waitingFor: null, waitingSince: null },
  });
}
