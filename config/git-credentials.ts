import fs from 'node:fs';
import { z } from 'zod';
import { CREDENTIAL_NAME } from '../domain/delivery';

// Credentials by reference: a request names one (`repository.credential`), the operator configures the
// secrets on the workers, as JSON in GIT_CREDENTIALS or in the file GIT_CREDENTIALS_FILE:
//   { "github-acme": { "username": "x-access-token", "password": "ghp_…", "hosts": ["github.com"],
//                      "apiToken": "ghp_…", "apiBaseUrl": "https://api.github.com" } }

export const gitCredentialSchema = z.strictObject({
  /** What git's askpass answers for "Username for …" (for GitHub tokens: `x-access-token`). */
  username: z.string().min(1).max(500),
  /** What git's askpass answers for "Password for …": a token or password. */
  password: z.string().min(1).max(10_000),
  /** Hosts the secret may be sent to; a repository or push URL on any other host is refused. */
  hosts: z.array(z.string().min(1).max(255).toLowerCase()).min(1),
  /** Token for the pull/merge request API; the password when left out. */
  apiToken: z.string().min(1).max(10_000).optional(),
  /** The provider's REST API base: https://api.github.com, https://gitlab.com/api/v4 or a self-hosted one. */
  apiBaseUrl: z.url().optional(),
});
export type GitCredential = z.infer<typeof gitCredentialSchema>;

const credentialsSchema = z.record(
  z.string().regex(CREDENTIAL_NAME, 'is not a valid credential name'),
  gitCredentialSchema,
);

export class GitCredentialsError extends Error {}

/**
 * The configured credentials by name, or null when this process was given none (no GIT_CREDENTIALS
 * and no GIT_CREDENTIALS_FILE): an API process without them cannot check names, the worker does.
 */
export function loadGitCredentials(
  inline: string | undefined,
  file: string | undefined,
): Record<string, GitCredential> | null {
  if (inline === undefined && file === undefined) return null;
  const merged: Record<string, GitCredential> = {};
  for (const [source, text] of [
    ['GIT_CREDENTIALS_FILE', file === undefined ? undefined : readFile(file)],
    ['GIT_CREDENTIALS', inline],
  ] as const) {
    if (text === undefined || text.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // Never echo the text: it holds secrets.
      throw new GitCredentialsError(`Invalid configuration: ${source} must be JSON`);
    }
    const parsed = credentialsSchema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new GitCredentialsError(`Invalid configuration: ${source}: ${problems}`);
    }
    Object.assign(merged, parsed.data);
  }
  return merged;
}

function readFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new GitCredentialsError(
      `Invalid configuration: GIT_CREDENTIALS_FILE ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** Every secret value, for the sanitiser. */
export function gitCredentialSecrets(credentials: Record<string, GitCredential> | null): string[] {
  return Object.values(credentials ?? {}).flatMap((c) => [c.password, ...(c.apiToken ? [c.apiToken] : [])]);
}
