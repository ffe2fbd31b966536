import { z } from 'zod';
import { networkRequestSchema, type NetworkRequest } from './egress';

// Maker presets for the coding-agent CLIs people already use (Claude Code, OpenAI Codex, Aider, Gemini CLI). A
// preset names the tool; the service builds the documented headless invocation for it
// (activities/makers/presets.ts) instead of trusting a hand-written argv to get the flags right.
// Pure: shared with the workflow sandbox, so no Node imports here.

export const PRESET_BACKENDS = ['claude-code', 'codex', 'aider', 'gemini'] as const;
export type PresetBackend = (typeof PRESET_BACKENDS)[number];

/** The executable each preset runs when binaryPath is not given (looked up on the child's PATH). */
export const PRESET_DEFAULT_BINARIES: Readonly<Record<PresetBackend, string>> = {
  'claude-code': 'claude',
  codex: 'codex',
  aider: 'aider',
  gemini: 'gemini',
};

// Same bounds as a command maker's argv entries (domain/argv.ts argvSchema).
const binaryPathSchema = z.string().trim().min(1).max(4096);
const modelSchema = z.string().trim().min(1).max(200);
/** Appended after the preset's own flags (e.g. Claude's `--allowedTools "Bash(npm test:*)"`). */
const extraArgsSchema = z.array(z.string().min(1).max(4096)).max(64);
const timeoutSecondsSchema = z.number().int().min(1).max(3600).default(900);
/** Network inside the sandbox: agent CLIs call their model API, so on (SANDBOX_EGRESS_AGENTS) unless turned off or narrowed. */
const networkSchema = networkRequestSchema.optional();

/** One preset's settings: the same fields for every CLI, its own backend name and default binary. */
function presetSettingsSchema<B extends PresetBackend>(backend: B) {
  return z.strictObject({
    backend: z.literal(backend),
    binaryPath: binaryPathSchema.default(PRESET_DEFAULT_BINARIES[backend]),
    model: modelSchema.optional(),
    extraArgs: extraArgsSchema.default([]),
    timeoutSeconds: timeoutSecondsSchema,
    network: networkSchema,
  });
}

/** The presets' strict objects, for spreading into a discriminated union with the command maker. */
export const presetMakerSettingsSchemas = [
  presetSettingsSchema('claude-code'),
  presetSettingsSchema('codex'),
  presetSettingsSchema('aider'),
  presetSettingsSchema('gemini'),
] as const;

export const presetMakerSettingsSchema = z.discriminatedUnion('backend', presetMakerSettingsSchemas);

/** Parsed settings (defaults applied). */
export type PresetMakerSettings = z.infer<typeof presetMakerSettingsSchema>;
/** Settings as a client writes them (defaults not yet applied). */
export type PresetMakerSettingsInput = z.input<typeof presetMakerSettingsSchema>;

export function isPresetBackend(backend: string): backend is PresetBackend {
  return (PRESET_BACKENDS as readonly string[]).includes(backend);
}

/** What an agent asks of the network: presets call their model API; a command only when asked. */
export function agentNetwork(settings: { backend: string; network?: NetworkRequest }): NetworkRequest {
  return settings.network ?? isPresetBackend(settings.backend);
}
