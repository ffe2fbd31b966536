import { z } from 'zod';
import { defineCommand } from '../command';
import { EXIT_CODES_HELP } from '../exit-codes';
import { durationOption, loopIdArg } from '../inputs';
import { followLoop } from '../watch/follow';
import { DEFAULT_WATCH_TIMEOUT_MS } from '../watch/reconnect';

export const MAX_WATCH_TIMEOUT_MS = 7 * 24 * 3_600_000;

export const timeoutOption = {
  type: 'string',
  value: 'DURATION',
  description: `how long to keep reconnecting while the API cannot be reached, e.g. 90s, 10m (default ${DEFAULT_WATCH_TIMEOUT_MS / 60_000}m)`,
} as const;

export const watchCommand = defineCommand({
  name: 'watch',
  summary: 'Follow a loop live until it ends or waits for a human decision',
  positionals: ['loopId'],
  usage: '<loopId> [--timeout DURATION]',
  details: [
    "Follows the loop's event stream (GET /v1/loops/:id/events) from its start: a line for every phase with",
    'the loop state, each command (gate, set-up) with its result and duration, each verdict, escalation and',
    'decision. On a terminal a spinner shows the current state on the last line. If the connection breaks or',
    'the API restarts, watch says so on stderr and reconnects where it left off, for as long as --timeout',
    'allows. With --json, prints each event as one JSON line: { id, event, data }.',
    '',
    EXIT_CODES_HELP,
  ].join('\n'),
  options: { timeout: timeoutOption },
  input: z.object({ loopId: loopIdArg, timeout: durationOption(MAX_WATCH_TIMEOUT_MS) }),
  run: (input, ctx) => followLoop(input.loopId, ctx, input.timeout ?? DEFAULT_WATCH_TIMEOUT_MS),
});
