import { z } from 'zod';
import { defineCommand } from '../command';
import { intOption, loopIdArg } from '../inputs';

// GET /v1/loops/:id/diff: the change a decision is about, before anything is delivered.

export const diffCommand = defineCommand({
  name: 'diff',
  summary: "A loop's change from its base as `git diff` text, before or after delivery",
  positionals: ['loopId'],
  usage: '<loopId> [--iteration N]',
  details:
    "The latest iteration's change unless --iteration names one; pipe it to `git apply` on the base commit. A diff past 1 MiB is cut at a line end, and stderr says so. With --json: loopId, iteration, truncated, diff.",
  options: {
    iteration: { type: 'string', value: 'N', description: 'the iteration (its number # as in show)' },
  },
  input: z.object({ loopId: loopIdArg, iteration: intOption(1, 100_000) }),
  run: async (input, ctx) => {
    const res = await ctx
      .api()
      .get<string>(`/v1/loops/${input.loopId}/diff`, { as: 'text', query: { iteration: input.iteration } });
    const iteration = Number(res.headers?.get('x-iteration'));
    const truncated = res.headers?.get('x-diff-truncated') === 'true';
    if (ctx.json) {
      ctx.io.out(JSON.stringify({ loopId: input.loopId, iteration, truncated, diff: res.body }));
      return 0;
    }
    ctx.io.out(res.body.replace(/\n$/, ''));
    if (truncated)
      ctx.io.err(`the change of iteration ${iteration} is larger than 1 MiB: this is its beginning, cut at a line end`);
    return 0;
  },
});
