import fs from 'node:fs';
import path from 'node:path';
import { setupPlan } from '../../analysis/setup/infer-setup';
import type { SetupCommand, SetupPlan } from '../../domain/setup';
import { WorkspaceDirectory } from '../verification/gate-discovery/workspace-directory';

// Setup inference (analysis/setup/infer-setup.ts) over the workspace on disk and the worker's PATH.

export interface SetupInputs {
  workspace: string;
  /** The request's `setup`; an empty list means "install nothing". */
  requested?: SetupCommand[];
  /** PATH to look for optional tools on (uv, bun, poetry); the worker's own by default. */
  searchPath?: string;
}

export async function resolveSetupPlan(inputs: SetupInputs): Promise<SetupPlan> {
  const files = new WorkspaceDirectory(await fs.promises.realpath(inputs.workspace), []);
  const searchPath = inputs.searchPath ?? process.env.PATH ?? '';
  return setupPlan(files, inputs.requested, (tool) => onPath(tool, searchPath));
}

function onPath(tool: string, searchPath: string): boolean {
  return searchPath
    .split(':')
    .filter((d) => path.isAbsolute(d))
    .some((d) => {
      try {
        fs.accessSync(path.join(d, tool), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
