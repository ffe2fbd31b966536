import type { GateCommand, GatePlan, GateSource } from '../../domain/gates';
import { VERIFICATION_CONFIG_PATH } from '../../domain/verification-config';
import { contractLayer, readVerificationConfig, repositoryConfigLayer } from './explicit-layers';
import type { Layer } from './layer';
import { manifestInference } from './manifest-inference';
import { detectProfile } from './profile';
import { profileDefaults } from './profile-defaults';
import { readRepoFacts } from './repo-facts';
import { resolveByPrecedence } from './resolve';
import type { WorkspaceFiles } from './workspace-files';

// Gate discovery (docs/design.md §3.2, docs/verification-config.md): each gate's command comes from the most
// specific layer that defines it — task contract → repository config → profile defaults → manifest
// inference. Each layer is computed on its own from the workspace's files; resolution only picks by precedence.
// A gate no layer defines is left out, and the verifier records it as NOT_CONFIGURED.

export const NO_TESTS_GATE =
  'no tests gate: neither the request, nor verification.json, nor a package.json test script, go.mod, Cargo.toml or a pytest ' +
  'configuration defines one, so no test runs and no acceptance criterion can be proven by a test';

/** The gate plan of the workspace `files` reads (its notes go into the plan). */
/** A repository cannot open the network to the commands it chooses; the submitter and the operator can. */
export const REPOSITORY_NETWORK_IGNORED = `${VERIFICATION_CONFIG_PATH} sets network: true, which a repository cannot do: gates get network only from the request's gateNetwork, within the operator's SANDBOX_EGRESS_GATES`;

export async function planGates(files: WorkspaceFiles, contractGates: GateCommand[]): Promise<GatePlan> {
  const { notes } = files;
  const config = await readVerificationConfig(files);
  const repo = await readRepoFacts(files);
  const detected = detectProfile(repo);
  const profile = config?.profile ?? detected?.profile ?? null;
  if (config?.profile) notes.push(`profile ${config.profile} set by ${VERIFICATION_CONFIG_PATH}`);
  else if (detected) notes.push(`profile ${detected.profile} detected: ${detected.evidence}`);

  const layers: Record<GateSource, Layer> = {
    contract: contractLayer(contractGates),
    'repository-config': repositoryConfigLayer(config),
    'profile-default': profileDefaults(profile, repo, notes),
    'manifest-inference': manifestInference(repo, notes),
  };
  const gates = resolveByPrecedence(layers, notes);
  const warnings: string[] = [];
  if (config?.network) warnings.push(REPOSITORY_NETWORK_IGNORED);
  if (!gates.some((g) => g.gate === 'tests')) warnings.push(NO_TESTS_GATE);
  return { gates, profile, notes, warnings, network: false };
}
