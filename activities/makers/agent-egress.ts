import type { ServiceConfig } from '../../config/service-config';
import { sandboxEgress, type EgressEntry, type NetworkRequest } from '../../domain/egress';
import { agentNetwork } from '../../domain/maker-presets';
import { agentAllowList } from '../../domain/operator-policy';

/**
 * What an agent's sandbox may reach (makers, reviewer agents, smoke tests): the operator policy's list for
 * its preset (agentNetwork) or else SANDBOX_EGRESS_AGENTS, narrowed by the request; null: no network.
 */
export function agentEgress(
  config: Pick<Readonly<ServiceConfig>, 'operatorPolicy' | 'sandbox'>,
  settings: { backend: string; network?: NetworkRequest },
): EgressEntry[] | null {
  const allow = agentAllowList(config.operatorPolicy, config.sandbox.egress.agents, settings.backend);
  return sandboxEgress(allow, agentNetwork(settings));
}
