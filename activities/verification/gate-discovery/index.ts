import fs from 'node:fs/promises';
import type { GateCommand, GatePlan } from '../../../domain/gates';
import { planGates } from '../../../analysis/gate-discovery/plan-gates';
import { WorkspaceDirectory } from './workspace-directory';

// Gate discovery (analysis/gate-discovery/plan-gates.ts) over the workspace on disk.

export interface GateDiscoveryInput {
  workspace: string;
  contractGates: GateCommand[];
}

export async function discoverGates(input: GateDiscoveryInput): Promise<GatePlan> {
  return planGates(new WorkspaceDirectory(await fs.realpath(input.workspace), []), input.contractGates);
}
