import { z } from 'zod';
import { networkRequestSchema, type NetworkRequest } from './egress';

// Maker presets for the coding-agent CLIs people already use (Claude Code, OpenAI Codex, Aider). A
// preset names the tool; the service builds the documented headless invocation for it
// (activities/makers/presets.ts) instead of trusting a hand-written argv to get the flags right.
// Pure: shared with the workflow sandbox, so no Node imports here.

export const PRESET_BACKENDS = ['claude-code', 'codex', 'aider'] as const;
export type PresetBackend = (typeof PRESET_BACKENDS)[number];

/** The executable each preset runs when binaryPath is not given (looked up on the child's PATH). */
export const PRESET_DEFAULT_BINARIES: Readonly<Record<PresetBackend, string>> = {
  'claude-code': 'claude',
  codex: 'codex',
  aider: 'aider',
};

// Same bounds as a command maker's argv entries (domain/argv.ts argvSchema).
const binaryPathSchema = z.string().trim().min(1).max(4096);
const modelSchema = z.string().trim().min(1).max(200);
/** Appended after the preset's own flags (e.g. Claude's `--allowedTools "Bash(npm test:*)"`). */
const extraArgsSchema = z.array(z.string().min(1).max(4096)).max(64);
const timeoutSecondsSchema = z.number().int().min(1).max(3600).default(900);
/** Network inside the sandbox: agent CLIs call their model API, so on (SANDBOX_EGRESS_AGENTS) unless turned off or narrowed. */
const networkSchema = networkRequestSchema.optional();

export const claudeCodeMakerSettingsSchema = z.strictObject({
  backend: z.literal('claude-code'),
  binaryPath: binaryPathSchema.default(PRESET_DEFAULT_BINARIES['claude-code']),
  model: modelSchema.optional(),
  extraArgs: extraArgsSchema.default([]),
  timeoutSeconds: timeoutSecondsSchema,
  network: networkSchema,
});

export const codexMakerSettingsSchema = z.strictObject({
  backend: z.literal('codex'),
  binaryPath: binaryPathSchema.default(PRESET_DEFAULT_BINARIES.codex),
  model: modelSchema.optional(),
  extraArgs: extraArgsSchema.default([]),
  timeoutSeconds: timeoutSecondsSchema,
  network: networkSchema,
});

export const aiderMakerSettingsSchema = z.strictObject({
  backend: z.literal('aider'),
  binaryPath: binaryPathSchema.default(PRESET_DEFAULT_BINARIES.aider),
  model: modelSchema.optional(),
  extraArgs: extraArgsSchema.default([]),
  timeoutSeconds: timeoutSecondsSchema,
  network: networkSchema,
});

/** The three strict objects, for spreading into a discriminated union with the command maker. */
export const presetMakerSettingsSchemas = [
  claudeCodeMakerSettingsSchema,
  codexMakerSettingsSchema,
  aiderMakerSettingsSchema,
] as const;

export const presetMakerSettingsSchema = z.discriminatedUnion('backend', presetMakerSettingsSchemas);

export type ClaudeCodeMakerSettings = z.infer<typeof claudeCodeMakerSettingsSchema>;
export type CodexMakerSettings = z.infer<typeof codexMakerSettingsSchema>;
export type AiderMakerSettings = z.infer<typeof aiderMakerSettingsSchema>;
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
