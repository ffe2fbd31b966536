import type { ServiceConfig } from '../service/config';

/** The service's own secrets, which must never be stored in evidence even if a command prints them. */
export function serviceSecrets(config: Readonly<ServiceConfig>): string[] {
  const secrets = [config.llm.apiKey, config.anthropic.apiKey];
  if (config.databaseUrl) {
    try {
      secrets.push(decodeURIComponent(new URL(config.databaseUrl).password));
    } catch {
      // An unparsable URL has no password to hide; config validation reports it elsewhere.
    }
  }
  return secrets.filter((s) => s.length > 0);
}
