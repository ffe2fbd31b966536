import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PRESET_BACKENDS, type PresetBackend } from '../domain/maker-presets';
import { PROJECT_ROOT } from './project-root';

// What the operator tells each coding-agent preset: where its model API is, the key it logs in with and
// the model it uses unless a request names one. One set of variables per CLI, because the CLIs disagree
// on what a base URL is (Claude Code appends /v1 itself; the built-in anthropic maker's ANTHROPIC_BASE_URL
// ends in /v1), so no variable serves two of them (docs/agents.md).

/** The variable prefix of each preset's settings: <PREFIX>_BASE_URL, <PREFIX>_API_KEY, <PREFIX>_MODEL. */
export const PRESET_ENV_PREFIX: Readonly<Record<PresetBackend, string>> = {
  'claude-code': 'CLAUDE_CODE',
  codex: 'CODEX',
  aider: 'AIDER',
};

export interface PresetEndpoint {
  /** Null: the CLI's own default (its vendor's public API). */
  baseUrl: string | null;
  /** Null: the CLI logs in however else it can (AGENT_CREDENTIALS, its own login); the value is a secret. */
  apiKey: string | null;
  /** Null: the CLI's own default model. A request's `model` wins. */
  model: string | null;
}

export interface PinnedAgentTool {
  registry: 'npm' | 'pypi';
  package: string;
  version: string;
  bin: string;
}

const pinsSchema = z.record(
  z.enum(PRESET_BACKENDS),
  z.object({ registry: z.enum(['npm', 'pypi']), package: z.string(), version: z.string(), bin: z.string() }),
);

/** The versions scripts/install-agents.sh installs (config/agent-tools.json), by preset. */
export function pinnedAgentTools(): Partial<Record<PresetBackend, PinnedAgentTool>> {
  return pinsSchema.parse(JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'config', 'agent-tools.json'), 'utf8')));
}

export const DEFAULT_AGENT_TOOLS_DIR = path.join(PROJECT_ROOT, '.tools', 'agents');

const urlSetting = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z
    .string()
    .regex(/^https?:\/\/[^\s/]/, 'must be an http(s) URL')
    .pipe(z.string().url())
    .optional(),
);
const textSetting = z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).max(4096).optional());

/** Each preset's endpoint from <PREFIX>_BASE_URL, _API_KEY and _MODEL; problems named by variable. */
export function presetEndpoints(env: NodeJS.ProcessEnv): {
  endpoints: Record<PresetBackend, PresetEndpoint>;
  problems: string[];
} {
  const problems: string[] = [];
  const endpoints = {} as Record<PresetBackend, PresetEndpoint>;
  for (const backend of PRESET_BACKENDS) {
    const prefix = PRESET_ENV_PREFIX[backend];
    const read = (name: string, schema: typeof urlSetting | typeof textSetting): string | null => {
      const parsed = schema.safeParse(env[`${prefix}_${name}`]);
      if (parsed.success) return parsed.data ?? null;
      problems.push(`${prefix}_${name}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      return null;
    };
    endpoints[backend] = {
      baseUrl: read('BASE_URL', urlSetting),
      apiKey: read('API_KEY', textSetting),
      model: read('MODEL', textSetting),
    };
  }
  return { endpoints, problems };
}
