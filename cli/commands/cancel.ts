import { z } from 'zod';
import type { Accepted } from '../api-types';
import { defineCommand } from '../command';
import { loopIdArg } from '../inputs';

// POST /v1/loops/:id/cancel: the loop's running commands are stopped and it ends CANCELLED.

export const cancelCommand = defineCommand({
  name: 'cancel',
  summary: 'Cancel a loop: its running commands are stopped and it ends CANCELLED',
  positionals: ['loopId'],
  usage: '<loopId>',
  details: [
    'Needs a submitter (or admin) key. The API answers once Temporal has the request; the loop then stops',
    'and ends CANCELLED (`engineering-loop watch <loopId>` follows it there and exits 3). A loop that has',
    'already ended is refused (409). With --json, prints the API answer.',
  ].join('\n'),
  options: {},
  input: z.object({ loopId: loopIdArg }),
  run: async (input, ctx) => {
    const answer = (await ctx.api().post<Accepted>(`/v1/loops/${input.loopId}/cancel`, undefined)).body;
    if (ctx.json) ctx.io.out(JSON.stringify(answer));
    else
      ctx.io.out(`cancellation requested for loop ${input.loopId}; follow it: engineering-loop watch ${input.loopId}`);
    return 0;
  },
});
