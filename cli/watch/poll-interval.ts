import { CliError } from '../errors';

// How often `watch` asks for the loop: --interval, else ENGINEERING_LOOP_POLL_MS, else once a second.

export const POLL_VARIABLE = 'ENGINEERING_LOOP_POLL_MS';
export const DEFAULT_POLL_MS = 1000;
export const MIN_POLL_MS = 50;
export const MAX_POLL_MS = 60_000;

export function pollInterval(option: number | undefined, env: NodeJS.ProcessEnv): number {
  if (option !== undefined) return option;
  const raw = env[POLL_VARIABLE]?.trim();
  if (!raw) return DEFAULT_POLL_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < MIN_POLL_MS || ms > MAX_POLL_MS) {
    throw new CliError(
      `${POLL_VARIABLE} must be a whole number of milliseconds from ${MIN_POLL_MS} to ${MAX_POLL_MS}, got ${JSON.stringify(raw)}`,
    );
  }
  return ms;
}
