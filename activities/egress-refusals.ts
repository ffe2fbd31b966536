import { sanitise } from '../domain/sanitise';
import type { ActivityDeps } from './deps';
import type { CommandResult } from './process/run-command';
import type { EgressRefusal } from './sandbox/egress-proxy';
import { insertExecutionRecord } from '../store/execution-records';

// Every connection the egress proxy refused is on record beside the loop's model calls (kind EGRESS,
// outcome REFUSED, the destination as provider), so the timeline shows it where it happened.

export interface RefusalContext {
  loopId: string;
  /** null for loop-level work (the maker workspace's set-up). */
  iterationSeq: number | null;
  role: 'maker' | 'reviewer' | 'setup' | 'gate';
  /** Which command tried: a gate or set-up label, or the agent's backend. */
  step: string;
}

export async function recordEgressRefusals(
  deps: ActivityDeps,
  at: RefusalContext,
  result: CommandResult,
): Promise<void> {
  for (const refusal of result.egressRefused) {
    await insertExecutionRecord(deps.prisma, {
      loopId: at.loopId,
      iterationSeq: at.iterationSeq,
      role: at.role,
      kind: 'EGRESS',
      provider: `${refusal.host}:${refusal.port}`,
      latencyMs: 0,
      outcome: 'REFUSED',
      detail: sanitise(
        `${at.step}: ${refusal.reason} (${refusal.attempts} attempt${refusal.attempts === 1 ? '' : 's'})`,
      ),
    });
  }
}

/** One line for a failure message: where the command tried to go and was not let through. */
export function refusedEgressLine(refused: readonly EgressRefusal[]): string | null {
  if (refused.length === 0) return null;
  const where = refused.map((r) => `${r.host}:${r.port}`).join(', ');
  return `the sandbox's egress proxy refused ${where} (not on the allow-list for this step, or an address of the host)`;
}
