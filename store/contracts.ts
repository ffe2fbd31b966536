import { randomUUID } from 'node:crypto';
import type { PrismaClient } from './db';

/**
 * Stores a contract version unless the loop has it already, and returns the stored one. One statement (a
 * local activity on the loop's path, in a worker whose Prisma query compiler rarely warms up): the first
 * write of a version wins, and a retry gets that one back.
 */
export async function insertContractVersion(
  db: PrismaClient,
  row: { loopId: string; version: number; hash: string; contract: unknown; reason: string },
): Promise<{ version: number; hash: string } | undefined> {
  const [stored] = await db.$queryRaw<Array<{ version: number; hash: string }>>`
    WITH inserted AS (
      INSERT INTO "ContractVersion" ("id", "loopId", "version", "hash", "contract", "reason", "createdAt")
      VALUES (${randomUUID()}, ${row.loopId}, ${row.version}::int, ${row.hash}, ${JSON.stringify(row.contract)}::jsonb, ${row.reason},
        ${new Date().toISOString()}::timestamptz AT TIME ZONE 'UTC')
      ON CONFLICT ("loopId", "version") DO NOTHING
      RETURNING "version", "hash"
    )
    SELECT "version", "hash" FROM inserted
    UNION ALL
    SELECT "version", "hash" FROM "ContractVersion"
    WHERE "loopId" = ${row.loopId} AND "version" = ${row.version}::int AND NOT EXISTS (SELECT 1 FROM inserted)`;
  return stored;
}

export function contractVersion(db: PrismaClient, loopId: string, version: number) {
  return db.contractVersion.findUniqueOrThrow({ where: { loopId_version: { loopId, version } } });
}

/** Delivery's read of the same row. */
export function contractVersionForDelivery(db: PrismaClient, loopId: string, version: number) {
  return db.contractVersion.findFirstOrThrow({ where: { loopId, version } });
}
