import { ApiError, ConnectionError } from '../api-client';
import { duration } from '../render/format';

// How long `watch` keeps trying while the API cannot be reached, answers 429 or 5xx, or drops the
// stream: until --timeout has passed since the last answer, waiting longer between attempts (up to
// MAX_DELAY_MS) so a restarting service is not hammered.

export const DEFAULT_WATCH_TIMEOUT_MS = 30 * 60_000;
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

/** Whether trying again may help: no answer, a busy or failing service, a stream cut short. */
export function isTransient(error: unknown): boolean {
  return error instanceof ConnectionError || (error instanceof ApiError && error.transient);
}

export class Reconnection {
  private failingSince: number | null = null;
  private attempts = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The API answered: --timeout counts again from the next failure. */
  answered(): void {
    this.failingSince = null;
  }

  /** Events came: the next attempt after a failure is quick again. */
  progressed(): void {
    this.attempts = 0;
  }

  /**
   * How long to wait before the next attempt after `error`. Throws `error` when trying again cannot help,
   * and a ConnectionError (exit 4) once --timeout has passed without an answer.
   */
  delayAfter(error: unknown): number {
    if (!isTransient(error)) throw error;
    const now = this.now();
    this.failingSince ??= now;
    const left = this.failingSince + this.timeoutMs - now;
    if (left <= 0) {
      const { message, hint } = error as ConnectionError | ApiError;
      throw new ConnectionError(`${message}; gave up after ${duration(this.timeoutMs)} of trying (--timeout)`, hint);
    }
    const delay = Math.min(FIRST_DELAY_MS * 2 ** this.attempts, MAX_DELAY_MS, left);
    this.attempts += 1;
    return delay;
  }
}
