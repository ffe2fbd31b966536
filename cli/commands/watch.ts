import { z } from 'zod';
import { defineCommand } from '../command';
import { intOption, loopIdArg } from '../inputs';
import { followLoop } from '../watch/follow';
import { MAX_POLL_MS, MIN_POLL_MS, pollInterval, POLL_VARIABLE } from '../watch/poll-interval';

export const intervalOption = {
  type: 'string',
  value: 'MS',
  description: `poll interval in milliseconds (default 1000, or ${POLL_VARIABLE})`,
} as const;

export const watchCommand = defineCommand({
  name: 'watch',
  summary: 'Follow a loop live until it ends or waits for a human decision',
  positionals: ['loopId'],
  usage: '<loopId> [--interval MS]',
  details: [
    'Prints a line whenever the status, phase or iteration changes, each gate result (name, status,',
    'duration) as it appears, each verdict and each escalation; on a terminal a spinner shows the current',
    'state. With --json, prints the loop (GET /v1/loops/:id) as one JSON line each time it changes.',
    '',
    'exit codes: 0 PASSED or APPROVED; 2 AWAITING_DECISION (it prints how to decide);',
    '            1 FAILED, REJECTED or CANCELLED, or an error',
  ].join('\n'),
  options: { interval: intervalOption },
  input: z.object({ loopId: loopIdArg, interval: intOption(MIN_POLL_MS, MAX_POLL_MS) }),
  run: (input, ctx) => followLoop(input.loopId, ctx, pollInterval(input.interval, ctx.env)),
});
