import { REDACTED } from './redacted';
import { redactSecretAssignments } from './sanitise-assignments';
import { redactPrivateKeyBlocks } from './sanitise-pem';
import { redactTokenShapes } from './sanitise-tokens';

// The one sanitiser for everything that leaves the service's control: stored output and records,
// Temporal payloads and failures, logs, API answers and prompts to models. Pure string code (the
// workflow bundle may import it); every pattern runs in linear time on any input.

export { REDACTED };

/** Shorter values would redact ordinary words; the service's real secrets are far longer. */
export const MIN_SECRET_LENGTH = 8;

// The service's own secrets, registered once at process start, so every boundary redacts them
// without threading configuration through. Longest first: a secret containing another goes whole.
let serviceSecretValues: readonly string[] = [];

export function registerServiceSecrets(values: readonly string[]): void {
  const all = new Set([...serviceSecretValues, ...values.filter((v) => v.length >= MIN_SECRET_LENGTH)]);
  serviceSecretValues = [...all].sort((a, b) => b.length - a.length);
}

/**
 * `text` with secrets replaced by [REDACTED]: the registered service secrets and `knownSecrets`
 * (literally, wherever they occur), private key blocks, credential-shaped tokens and the values of
 * secret-named assignments.
 */
export function sanitise(text: string, knownSecrets: readonly string[] = []): string {
  return redactSecretAssignments(sanitiseTokens(text, knownSecrets));
}

/**
 * Like {@link sanitise} without the assignment heuristics: only what is certainly a secret. For data
 * the service hands back as it was given (API answers), where `token: …` may be the user's own text.
 */
export function sanitiseTokens(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of [...serviceSecretValues, ...knownSecrets]) {
    if (secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return redactTokenShapes(redactPrivateKeyBlocks(out));
}
