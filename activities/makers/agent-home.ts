import fs from 'node:fs/promises';
import path from 'node:path';
import type { ServiceConfig } from '../../config/service-config';
import type { PresetBackend } from '../../domain/maker-presets';

// Each run of a preset CLI gets its own home in the run's control directory — writable, outside /tmp (Codex
// refuses to create its helpers under /tmp), thrown away with the iteration — holding just what the CLI
// needs to work headless and offline from everything but its model API: a git identity (Aider writes one
// into .git/config otherwise, which is read-only to agents), the CLI's configuration pointing it at the
// operator's endpoint, and its update checks, telemetry and price-list downloads turned off
// (docs/agents.md, "What each preset is set up with").

export interface AgentHome {
  /** The run's HOME: writable in the sandbox. */
  home: string;
  /** Variables for the CLI: its endpoint, key, config directory and switches. Values may be secrets. */
  env: Record<string, string>;
}

const GIT_IDENTITY = '[user]\n\tname = Engineering loop maker\n\temail = maker@engineering-loop.invalid\n';

/** Creates `<stateDir>/home` afresh for one run of `backend`. */
export async function prepareAgentHome(
  config: Pick<Readonly<ServiceConfig>, 'agents' | 'agentCredentials'>,
  backend: PresetBackend,
  stateDir: string,
): Promise<AgentHome> {
  const home = path.join(stateDir, 'home');
  await fs.rm(home, { recursive: true, force: true });
  await fs.mkdir(home, { recursive: true });
  await fs.writeFile(path.join(home, '.gitconfig'), GIT_IDENTITY);
  const endpoint = config.agents.endpoints[backend];
  const env: Record<string, string> = { HOME: home, ...config.agentCredentials };
  switch (backend) {
    case 'claude-code':
      Object.assign(env, {
        CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
        // Claude Code's own switches: no auto-update, telemetry, error reports or other non-model traffic.
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      });
      // Claude Code appends /v1/messages to this itself.
      if (endpoint.baseUrl) env.ANTHROPIC_BASE_URL = endpoint.baseUrl.replace(/\/+$/, '');
      if (endpoint.apiKey) env.ANTHROPIC_API_KEY = endpoint.apiKey;
      break;
    case 'codex': {
      const codexHome = path.join(home, '.codex');
      await fs.mkdir(codexHome);
      await fs.writeFile(path.join(codexHome, 'config.toml'), codexConfig(endpoint.baseUrl));
      env.CODEX_HOME = codexHome;
      // `codex exec` logs in with CODEX_API_KEY (OPENAI_BASE_URL is not read: the provider above is).
      if (endpoint.apiKey) env.CODEX_API_KEY = endpoint.apiKey;
      break;
    }
    case 'aider': {
      // Aider downloads LiteLLM's price list into this cache unless a fresh, non-empty one is there; with a
      // one-entry list it stays offline and LiteLLM answers from the copy it ships (LITELLM_LOCAL_MODEL_COST_MAP).
      const caches = path.join(home, '.aider', 'caches');
      await fs.mkdir(caches, { recursive: true });
      await fs.writeFile(
        path.join(caches, 'model_prices_and_context_window.json'),
        JSON.stringify({ 'engineering-loop-offline': {} }),
      );
      env.LITELLM_LOCAL_MODEL_COST_MAP = 'True';
      if (endpoint.baseUrl) env.OPENAI_API_BASE = endpoint.baseUrl;
      if (endpoint.apiKey) env.OPENAI_API_KEY = endpoint.apiKey;
      break;
    }
    case 'gemini': {
      const gemini = path.join(home, '.gemini');
      await fs.mkdir(gemini);
      await fs.writeFile(path.join(gemini, 'settings.json'), JSON.stringify(GEMINI_SETTINGS, null, 2));
      // The Gemini SDK appends /v1beta/models/… to this itself.
      if (endpoint.baseUrl) env.GOOGLE_GEMINI_BASE_URL = endpoint.baseUrl.replace(/\/+$/, '');
      if (endpoint.apiKey) env.GEMINI_API_KEY = endpoint.apiKey;
      break;
    }
  }
  return { home, env };
}

/**
 * Gemini CLI's user settings (~/.gemini/settings.json): log in with GEMINI_API_KEY (it refuses to pick an
 * auth method headless), trust the workspace (an untrusted folder turns --yolo back into prompts nobody
 * answers), and no auto-update, usage statistics, telemetry or IDE connection. Its sessions and history stay
 * in this home. No next-speaker or loop-detection calls: each would be a model call of its own.
 */
const GEMINI_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
  model: { skipNextSpeakerCheck: true, disableLoopDetection: true },
  ide: { enabled: false },
};

/**
 * Codex's configuration: the operator's endpoint as a Responses-API provider of its own (Codex reads no base
 * URL variable); no update check, no curated-plugin sync (github.com, chatgpt.com) and no analytics
 * (ab.chatgpt.com); commands through a plain shell so the PATH the sandbox gives (the toolchains, the loop's
 * venv) survives — a login shell would reset it from /etc/profile.
 */
function codexConfig(baseUrl: string | null): string {
  const lines = ['check_for_update_on_startup = false', 'allow_login_shell = false'];
  if (baseUrl) {
    lines.push(
      'model_provider = "loop"',
      '',
      '[model_providers.loop]',
      'name = "engineering loop operator endpoint"',
      `base_url = ${JSON.stringify(baseUrl.replace(/\/+$/, ''))}`,
      'env_key = "CODEX_API_KEY"',
      'wire_api = "responses"',
    );
  }
  lines.push('', '[features]', 'plugins = false', '', '[analytics]', 'enabled = false');
  lines.push('', '[history]', 'persistence = "none"', '');
  return lines.join('\n');
}
