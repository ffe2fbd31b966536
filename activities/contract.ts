import { canonicalJson, goalContractSchema, type FrozenContract, type GoalContract } from '../domain/contract';
import type { ActivityDeps } from './deps';
import { sha256 } from './git';

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
  const stored = await deps.prisma.contractVersion.upsert({
    where: { loopId_version: { loopId: input.loopId, version: input.version } },
    create: { loopId: input.loopId, version: input.version, hash, contract, reason: input.reason },
    update: {},
  });
  return { version: stored.version, hash: stored.hash };
}

export async function loadContract(deps: ActivityDeps, loopId: string, version: number): Promise<FrozenContract> {
  const row = await deps.prisma.contractVersion.findUniqueOrThrow({ where: { loopId_version: { loopId, version } } });
  return { version: row.version, hash: row.hash, contract: goalContractSchema.parse(row.contract) };
}
