import type { LoopRequest } from '../domain/loop-request';
import { classifyRepositoryUrl } from '../domain/repository-url';
import type { ApiPolicy } from './app';
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
}
