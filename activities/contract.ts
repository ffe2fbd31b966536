import { randomUUID } from 'node:crypto';
import { canonicalJson, goalContractSchema, type FrozenContract, type GoalContract } from '../domain/contract';
import type { ActivityDeps } from './deps';
import { sha256 } from './git';
import { keptPerClient } from './kept-promises';

export interface FreezeContractInput {
  loopId: string;
  version: number;
  contract: GoalContract;
  reason: string;
}

/** Records a contract version with its canonical hash. Every version is kept; re-running returns the stored one. */
export async function freezeContract(deps: ActivityDeps, input: FreezeContractInput): Promise<{ version: number; hash: string }> {
  const contract = goalContractSchema.parse(input.contract);
  const hash = sha256(canonicalJson(contract));
  // One statement (a local activity on the loop's path, in a worker whose Prisma query compiler rarely
  // warms up): the first write of a version wins, and a retry gets that one back.
  const [stored] = await deps.prisma.$queryRaw<Array<{ version: number; hash: string }>>`
    WITH inserted AS (
      INSERT INTO "ContractVersion" ("id", "loopId", "version", "hash", "contract", "reason", "createdAt")
      VALUES (${randomUUID()}, ${input.loopId}, ${input.version}::int, ${hash}, ${JSON.stringify(contract)}::jsonb, ${input.reason},
        ${new Date().toISOString()}::timestamptz AT TIME ZONE 'UTC')
      ON CONFLICT ("loopId", "version") DO NOTHING
      RETURNING "version", "hash"
    )
    SELECT "version", "hash" FROM inserted
    UNION ALL
    SELECT "version", "hash" FROM "ContractVersion"
    WHERE "loopId" = ${input.loopId} AND "version" = ${input.version}::int AND NOT EXISTS (SELECT 1 FROM inserted)`;
  return { version: stored!.version, hash: stored!.hash };
}

/**
 * A frozen contract version. Versions never change once stored (freezeContract keeps the first write),
 * so each worker keeps the last CONTRACT_CACHE_SIZE it loaded, per database client: most activities of
 * an iteration read the same one. Every caller gets its own copy.
 */
export async function loadContract(deps: ActivityDeps, loopId: string, version: number): Promise<FrozenContract> {
  const frozen = keptContracts(deps.prisma).get(`${loopId}\u0000${version}`, async () => {
    const row = await deps.prisma.contractVersion.findUniqueOrThrow({ where: { loopId_version: { loopId, version } } });
    return { version: row.version, hash: row.hash, contract: goalContractSchema.parse(row.contract) };
  });
  return structuredClone(await frozen);
}

export const CONTRACT_CACHE_SIZE = 500;

const keptContracts = keptPerClient<FrozenContract>(CONTRACT_CACHE_SIZE);
