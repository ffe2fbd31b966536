import type { LoopRequest } from '../domain/loop-request';
import { classifyRepositoryUrl } from '../domain/repository-url';
import type { ApiPolicy } from './deps';
import { ApiError } from './errors';

// The request schema refuses URLs git could misread; whether the worker's own disk is a valid source is the
// operator's call (ALLOW_LOCAL_REPOSITORIES), so it is checked where the policy is known.

export function checkRepositorySource(policy: ApiPolicy, request: LoopRequest): void {
  const source = classifyRepositoryUrl(request.repository.url);
  if (source.ok && source.local && !policy.repositories.allowLocal) {
    throw new ApiError(
      400,
      'body.repository.url: the operator does not allow local repositories (paths, file:// and loopback http://; ALLOW_LOCAL_REPOSITORIES is off); use an https:// or ssh URL',
    );
  }
  const pushUrl = request.delivery.pushUrl;
  const pushSource = pushUrl === undefined ? null : classifyRepositoryUrl(pushUrl);
  if (pushSource?.ok && pushSource.local && !policy.repositories.allowLocal) {
    throw new ApiError(
      400,
      'body.delivery.pushUrl: the operator does not allow local repositories (ALLOW_LOCAL_REPOSITORIES is off); use an https:// or ssh URL',
    );
  }
  // Names are checked where this process was given the credentials (GIT_CREDENTIALS / GIT_CREDENTIALS_FILE);
  // an API without them leaves the check to the worker, which fails the loop naming the credential.
  const credential = request.repository.credential;
  if (credential !== undefined && policy.credentialNames && !policy.credentialNames.includes(credential)) {
    throw new ApiError(400, `body.repository.credential: "${credential}" is not a credential the operator configured`);
  }
}
