import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { classifyRepositoryUrl } from '../domain/repository-url';
import type { ServiceConfig } from '../config/service-config';
import { ASKPASS_PASSWORD_VAR, ASKPASS_USERNAME_VAR, type RemoteAccess } from './git-isolation';

// How git gets a named credential: GIT_ASKPASS points at this script, which answers git's
// "Username for …" and "Password for …" prompts from variables set only in that git process's
// environment. The script holds no secret; the secret is in no argv, file, log or payload.

export const ASKPASS_SCRIPT = [
  '#!/bin/sh',
  '# Written by the engineering loop: answers git from its own environment (never from argv).',
  'case "$1" in',
  `  Username*) printf '%s\\n' "$${ASKPASS_USERNAME_VAR}" ;;`,
  `  *) printf '%s\\n' "$${ASKPASS_PASSWORD_VAR}" ;;`,
  'esac',
  '',
].join('\n');

/** Writes the askpass script under the data directory (the sandbox cannot see it) and returns its path. */
export async function ensureAskPass(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'git-askpass.sh');
  const current = await fs.readFile(file, 'utf8').catch(() => null);
  if (current === ASKPASS_SCRIPT) return file;
  await fs.mkdir(dataDir, { recursive: true });
  // Written aside and renamed: a concurrent git call sees the old script or the new one, never half of it.
  const temporary = `${file}.${randomUUID()}`;
  await fs.writeFile(temporary, ASKPASS_SCRIPT, { mode: 0o700 });
  await fs.rename(temporary, file);
  return file;
}

/**
 * What a clone or push of `url` may use: its transport, and the named credential when the request names
 * one. Refused (non-retryable) for a name the operator did not configure, or a host the credential is
 * not for. The worker checks again whatever the API checked: a workflow can be started without the API.
 */
export async function remoteAccessFor(
  config: Readonly<ServiceConfig>,
  url: string,
  credentialName: string | undefined,
  field: string,
): Promise<RemoteAccess> {
  const source = classifyRepositoryUrl(url);
  if (!source.ok) throw refused(`${field}: ${source.problem}`);
  if (source.local && !config.repositories.allowLocal)
    throw refused(`${field}: local repositories are not allowed (ALLOW_LOCAL_REPOSITORIES is off)`);
  const access: RemoteAccess = {
    transport: source.transport,
    connectTimeoutSeconds: config.repositories.connectTimeoutSeconds,
  };
  if (!credentialName) return access;
  const credential = config.gitCredentials?.[credentialName];
  if (!credential)
    throw refused(
      `repository.credential: "${credentialName}" is not configured on this worker (GIT_CREDENTIALS / GIT_CREDENTIALS_FILE)`,
    );
  if (source.transport === 'https' || source.transport === 'http') {
    const host = new URL(url).hostname.toLowerCase();
    if (!credential.hosts.includes(host))
      throw refused(
        `repository.credential: "${credentialName}" is not for host ${host} (its hosts: ${credential.hosts.join(', ')})`,
      );
  } else {
    // ssh authenticates with the worker's keys; a path needs nothing: the secret is not handed to git at all.
    return access;
  }
  return {
    ...access,
    credential: {
      username: credential.username,
      password: credential.password,
      askPassPath: await ensureAskPass(config.dataDir),
    },
  };
}

function refused(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'RepositoryAccessError', message, nonRetryable: true });
}
