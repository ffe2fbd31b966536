import fs from 'node:fs/promises';
import path from 'node:path';
import type { PresetMakerSettings } from '../../domain/maker-presets';
import type { ActivityDeps } from '../deps';
import { handOver } from '../sandbox/hand-over';
import { prepareAgentHome } from './agent-home';
import { buildPresetInvocation } from './presets';

// One run of a preset CLI, ready to start: its command line, its per-run home (agent-home.ts) and the
// variables that point it at the operator's endpoint, with the installed CLIs first on its PATH.
// Shared by makers and reviewer agents.

export interface PresetLaunch {
  argv: string[];
  stdin: string | undefined;
  env: Record<string, string>;
  /** The run's HOME (inside stateDir, which the sandbox must show writable). */
  home: string;
}

export async function launchPreset(
  deps: Pick<ActivityDeps, 'config' | 'sandbox'>,
  settings: PresetMakerSettings,
  run: {
    prompt: string;
    promptFile: string;
    stateDir: string;
    gateCommands: string[][];
    /** PATH as set-up left it (the loop's venv first), if it changed it. */
    path?: string;
  },
): Promise<PresetLaunch> {
  await fs.mkdir(run.stateDir, { recursive: true });
  const { home, env } = await prepareAgentHome(deps.config, settings.backend, run.stateDir);
  await handOver(deps.sandbox, run.stateDir);
  const invocation = buildPresetInvocation(settings, {
    ...run,
    defaultModel: deps.config.agents.endpoints[settings.backend].model,
  });
  const toolsBin = path.join(deps.config.agents.toolsDir, 'bin');
  return {
    ...invocation,
    env: { ...env, PATH: [toolsBin, run.path ?? process.env.PATH ?? '/usr/bin:/bin'].join(':') },
    home,
  };
}
