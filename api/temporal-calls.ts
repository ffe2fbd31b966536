import { isGrpcServiceError, type Client } from '@temporalio/client';
import { unavailable } from './errors';

/** How long a request waits for Temporal before answering 503: without a deadline the client retries for ~20 s. */
export const TEMPORAL_DEADLINE_MS = 5_000;
export const TEMPORAL_RETRY_AFTER_SECONDS = 10;

// gRPC status codes meaning the server could not be reached or did not answer in time.
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;

/**
 * Runs `call` against Temporal within `deadlineMs`; when Temporal cannot be reached, answers 503 with
 * Retry-After and `whenUnreachable` (what became of the request) instead of an internal error.
 */
export async function callTemporal<T>(
  temporal: Client,
  whenUnreachable: string,
  call: () => Promise<T>,
  deadlineMs = TEMPORAL_DEADLINE_MS,
): Promise<T> {
  try {
    return await temporal.withDeadline(Date.now() + deadlineMs, call);
  } catch (err) {
    if (unreachable(err))
      throw unavailable(`Temporal is unavailable: ${whenUnreachable}`, TEMPORAL_RETRY_AFTER_SECONDS);
    throw err;
  }
}

function unreachable(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (isGrpcServiceError(e) && (e.code === DEADLINE_EXCEEDED || e.code === UNAVAILABLE)) return true;
  }
  return false;
}
