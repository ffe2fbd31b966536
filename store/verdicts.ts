import { randomUUID } from 'node:crypto';
import type { PrismaClient } from './db';

/**
 * Writes an iteration's verdict; a retry that finds the verdict written replaces it, keeping its id.
 * Says whether this write created it; undefined when the loop has no such iteration. One statement
 * through the iteration (a local activity on the loop's path, in a worker whose Prisma query compiler
 * rarely warms up).
 */
export async function upsertVerdict(
  db: PrismaClient,
  v: {
    loopId: string;
    sequence: number;
    verdict: string;
    trigger: string | null;
    directives: unknown;
    report: unknown;
    markdown: string;
  },
): Promise<{ created: boolean } | undefined> {
  const id = randomUUID();
  const [written] = await db.$queryRaw<Array<{ id: string }>>`
    INSERT INTO "Verdict" ("id", "loopId", "iterationId", "verdict", "trigger", "directives", "report", "markdown", "createdAt")
    SELECT ${id}, "loopId", "id", ${v.verdict}, ${v.trigger}::text, ${JSON.stringify(v.directives)}::jsonb, ${JSON.stringify(v.report)}::jsonb,
      ${v.markdown}, ${new Date().toISOString()}::timestamptz AT TIME ZONE 'UTC'
    FROM "Iteration" WHERE "loopId" = ${v.loopId} AND "sequence" = ${v.sequence}::int
    ON CONFLICT ("iterationId") DO UPDATE SET
      "verdict" = EXCLUDED."verdict", "trigger" = EXCLUDED."trigger", "directives" = EXCLUDED."directives", "report" = EXCLUDED."report", "markdown" = EXCLUDED."markdown"
    RETURNING "id"`;
  return written && { created: written.id === id };
}
