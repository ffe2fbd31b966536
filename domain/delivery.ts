import { z } from 'zod';
import { classifyRepositoryUrl, repositoryUrlSchema } from './repository-url';

// How a finished loop leaves the worker: its branch pushed to a remote, optionally a pull request
// (GitHub) or merge request (GitLab) opened from it. Credentials are named, never given: the operator
// configures the secrets on the workers (GIT_CREDENTIALS / GIT_CREDENTIALS_FILE).

/** A credential's name as a request may write it; the secret behind it lives only on the workers. */
export const CREDENTIAL_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export const credentialNameSchema = z
  .string()
  .regex(
    CREDENTIAL_NAME,
    'must be a credential name the operator configured (lowercase letters, digits, ".", "_", "-"; at most 64)',
  );

/** `owner/repo` (GitHub) or `group/subgroup/project` (GitLab). */
const PROJECT_PATH = /^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/;

export const pullRequestSettingsSchema = z.strictObject({
  provider: z.enum(['github', 'gitlab']),
  /** Opened as a draft (GitHub `draft`, GitLab's `Draft: ` title prefix) unless false. */
  draft: z.boolean().default(true),
  /** The branch to merge into; the repository's `baseRef` when left out. */
  base: z.string().trim().min(1).max(255).optional(),
  /** `owner/repo` on the provider; derived from the push URL (or repository URL) when left out. */
  project: z
    .string()
    .trim()
    .max(500)
    .regex(PROJECT_PATH, 'must look like owner/repo (or group/subgroup/project)')
    .optional(),
});
export type PullRequestSettings = z.infer<typeof pullRequestSettingsSchema>;

export const deliverySettingsSchema = z.strictObject({
  /** Push the loop's branch when it passes or is approved. */
  push: z.boolean().default(true),
  /** Where to push; the repository URL when left out. Same rules as the repository URL (no credentials in it). */
  pushUrl: repositoryUrlSchema.optional(),
  pullRequest: pullRequestSettingsSchema.optional(),
  /** A change whose context impact is MAJOR (CI, workspace layout, build system) waits for a person's approval first. */
  majorImpactNeedsApproval: z.boolean().default(false),
});
export type DeliverySettings = z.infer<typeof deliverySettingsSchema>;

/** What delivery did; the Loop row, the activity result and the final report carry it. */
export interface DeliveryResult {
  /** The branch as it now exists on the remote, or null when nothing was pushed. */
  pushedBranch: string | null;
  /** Where it was pushed (the URL as the request gave it: it never holds credentials). */
  pushedTo: string | null;
  pullRequestUrl: string | null;
  /** Why delivery stopped short; the loop's result stands regardless. */
  error: string | null;
}

/**
 * `owner/repo` from a GitHub or GitLab style URL (`https://host/owner/repo(.git)`, `ssh://git@host/owner/repo`,
 * `git@host:owner/repo.git`), or null when the URL has no such path (a local path, say).
 */
export function projectPathFromUrl(url: string): string | null {
  const source = classifyRepositoryUrl(url);
  if (!source.ok || source.local) return null;
  let pathPart: string;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*(\/.*)?$/.exec(url);
  if (scheme) pathPart = scheme[1] ?? '';
  else pathPart = url.slice(url.indexOf(':') + 1);
  const project = pathPart.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
  return PROJECT_PATH.test(project) ? project : null;
}
