import { canonicalJson, goalContractSchema, type FrozenContract, type GoalContract } from '../domain/contract';
import type { ActivityDeps } from './deps';
import { sha256 } from './git';
import { keptPerClient } from './kept-promises';
import { contractVersion, insertContractVersion } from '../store/contracts';

export interface FreezeContractInput {
  loopId: string;
  version: number;
  contract: GoalContract;
  reason: string;
}

/** Records a contract version with its canonical hash. Every version is kept; re-running returns the stored one. */
export async function freezeContract(
  deps: ActivityDeps,
  input: FreezeContractInput,
): Promise<{ version: number; hash: string }> {
  const contract = goalContractSchema.parse(input.contract);
  const hash = sha256(canonicalJson(contract));
  const stored = await insertContractVersion(deps.prisma, {
    loopId: input.loopId,
    version: input.version,
    hash,
    contract,
    reason: input.reason,
  });
  return { version: stored!.version, hash: stored!.hash };
}

/**
 * A frozen contract version. Versions never change once stored (freezeContract keeps the first write),
 * so each worker keeps the last CONTRACT_CACHE_SIZE it loaded, per database client: most activities of
 * an iteration read the same one. Every caller gets its own copy.
 */
export async function loadContract(deps: ActivityDeps, loopId: string, version: number): Promise<FrozenContract> {
  const frozen = keptContracts(deps.prisma).get(`${loopId}\u0000${version}`, async () => {
    const row = await contractVersion(deps.prisma, loopId, version);
    return { version: row.version, hash: row.hash, contract: goalContractSchema.parse(row.contract) };
  });
  return structuredClone(await frozen);
}

export const CONTRACT_CACHE_SIZE = 500;

const keptContracts = keptPerClient<FrozenContract>(CONTRACT_CACHE_SIZE);
