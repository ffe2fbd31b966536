import type { ServiceConfig } from './service-config';
import { gitCredentialSecrets } from './git-credentials';

/**
 * The service's own secrets, which must never leave it (evidence, records, logs, answers, prompts) even
 * if a command prints them. `databaseUrl` is the database actually used: the embedded PostgreSQL's,
 * with its generated password, when the configuration names none.
 */
export function serviceSecrets(config: Readonly<ServiceConfig>, databaseUrl = config.databaseUrl): string[] {
  const secrets = [
    config.llm.apiKey,
    config.anthropic.apiKey,
    ...Object.values(config.agentCredentials),
    ...Object.values(config.agents.endpoints).flatMap((e) => (e.apiKey ? [e.apiKey] : [])),
    ...gitCredentialSecrets(config.gitCredentials),
  ];
  if (databaseUrl) {
    try {
      secrets.push(decodeURIComponent(new URL(databaseUrl).password));
    } catch {
      // An unparsable URL has no password to hide; config validation reports it elsewhere.
    }
  }
  return secrets.filter((s) => s.length > 0);
}
