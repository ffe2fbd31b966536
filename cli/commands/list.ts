import { z } from 'zod';
import { LIST_STATUSES, type LoopSummary } from '../api-types';
import { defineCommand } from '../command';
import { enumArg, intOption } from '../inputs';
import { loopTable } from '../render/loop';

export const listCommand = defineCommand({
  name: 'list',
  summary: 'List loops, newest first',
  positionals: [],
  usage: '[--status S] [--limit N]',
  options: {
    status: { type: 'string', value: 'S', description: `only loops with this status: ${LIST_STATUSES.join(', ')}` },
    limit: { type: 'string', value: 'N', description: 'at most N loops (1-200, default 50)' },
  },
  input: z.object({
    status: z
      .string()
      .transform((s) => s.trim().toUpperCase())
      .pipe(enumArg(LIST_STATUSES, 'the status'))
      .optional(),
    limit: intOption(1, 200),
  }),
  run: async (input, ctx) => {
    const answer = await ctx
      .api()
      .get<{ loops: LoopSummary[] }>('/v1/loops', { query: { status: input.status, limit: input.limit } });
    ctx.io.out(ctx.json ? JSON.stringify(answer.body) : loopTable(answer.body.loops));
    return 0;
  },
});
