import type { ServiceConfig } from '../../config/service-config';
import { parseEgressEntry, sandboxEgress, type EgressEntry, type NetworkRequest } from '../../domain/egress';
import { agentNetwork, isPresetBackend } from '../../domain/maker-presets';

/**
 * What an agent's sandbox may reach (makers, reviewer agents, smoke tests): the operator policy's list for
 * its preset (agentNetwork) or else SANDBOX_EGRESS_AGENTS, narrowed by the request; null: no network.
 */
export function agentEgress(
  config: Pick<Readonly<ServiceConfig>, 'operatorPolicy' | 'sandbox'>,
  settings: { backend: string; network?: NetworkRequest },
): EgressEntry[] | null {
  const presetList = isPresetBackend(settings.backend)
    ? config.operatorPolicy.agentNetwork?.[settings.backend]
    : undefined;
  const allow = presetList ? presetList.map(parseEgressEntry) : config.sandbox.egress.agents;
  return sandboxEgress(allow, agentNetwork(settings));
}
