import path from 'node:path';
import { PRESET_BACKENDS, type PresetBackend } from '../domain/maker-presets';
import { PROJECT_ROOT } from './project-root';

// What the operator tells each coding-agent preset: where its model API is, the key it logs in with and
// the model it uses unless a request names one. One set of variables per CLI, because the CLIs disagree
// on what a base URL is (Claude Code appends /v1 itself; the built-in anthropic maker's ANTHROPIC_BASE_URL
// ends in /v1), so no variable serves two of them (docs/agents.md).

/** The variable prefix of each preset's settings: <PREFIX>_BASE_URL, <PREFIX>_API_KEY, <PREFIX>_MODEL. */
export const PRESET_ENV_PREFIX = {
  'claude-code': 'CLAUDE_CODE',
  codex: 'CODEX',
  aider: 'AIDER',
  gemini: 'GEMINI',
} as const satisfies Record<PresetBackend, string>;

export interface PresetEndpoint {
  /** Null: the CLI's own default (its vendor's public API). */
  baseUrl: string | null;
  /** Null: the CLI logs in however else it can (AGENT_CREDENTIALS, its own login); the value is a secret. */
  apiKey: string | null;
  /** Null: the CLI's own default model. A request's `model` wins. */
  model: string | null;
}

/** Where scripts/install-agents.sh installs the CLIs pinned in config/agent-tools.json. */
export const DEFAULT_AGENT_TOOLS_DIR = path.join(PROJECT_ROOT, '.tools', 'agents');

type PresetSettings = Partial<
  Record<`${'CLAUDE_CODE' | 'CODEX' | 'AIDER' | 'GEMINI'}_${'BASE_URL' | 'API_KEY' | 'MODEL'}`, string>
>;

/** Each preset's endpoint from its <PREFIX>_BASE_URL, _API_KEY and _MODEL (validated by envSchema). */
export function presetEndpoints(settings: PresetSettings): Record<PresetBackend, PresetEndpoint> {
  const endpoints = {} as Record<PresetBackend, PresetEndpoint>;
  for (const backend of PRESET_BACKENDS) {
    const prefix = PRESET_ENV_PREFIX[backend];
    endpoints[backend] = {
      baseUrl: settings[`${prefix}_BASE_URL`] ?? null,
      apiKey: settings[`${prefix}_API_KEY`] || null,
      model: settings[`${prefix}_MODEL`] ?? null,
    };
  }
  return endpoints;
}
