import { FAILURE_STATUSES, SUCCESS_STATUSES } from './api-types';

// The CLI's exit codes, for scripts: what happened to the loop, told apart from not getting an answer.

/** Done: the command worked; `watch`: the loop PASSED or was APPROVED. */
export const EXIT_OK = 0;
/** A usage error, a refused request, an unknown loop, or a failure of the CLI itself. */
export const EXIT_ERROR = 1;
/** `watch`: the loop waits for a person to decide an escalation (AWAITING_DECISION). */
export const EXIT_AWAITING_DECISION = 2;
/** `watch`: the loop ended without passing: FAILED, REJECTED, CANCELLED or TERMINATED. */
export const EXIT_LOOP_FAILED = 3;
/** The API could not be reached (or `watch` gave up reconnecting), or it refused the API key (401, 403). */
export const EXIT_UNREACHABLE = 4;

/** The exit code of a loop that ended with `status`; null while it has not ended. */
export function exitCodeOfStatus(status: string): number | null {
  if (SUCCESS_STATUSES.includes(status)) return EXIT_OK;
  if (FAILURE_STATUSES.includes(status)) return EXIT_LOOP_FAILED;
  return null;
}

/** For --help. */
export const EXIT_CODES_HELP = [
  'exit codes: 0 success (watch: PASSED or APPROVED)',
  '            1 error: bad arguments, a refused request, an unknown loop',
  '            2 watch: the loop waits for a human decision (AWAITING_DECISION)',
  '            3 watch: the loop ended FAILED, REJECTED, CANCELLED or TERMINATED',
  '            4 the API cannot be reached (watch: for longer than --timeout) or refused the API key',
].join('\n');
