import { z } from 'zod';
import type { LoopDetail } from '../api-types';
import { defineCommand } from '../command';
import { loopIdArg } from '../inputs';
import { loopSummaryText } from '../render/loop';

export const showCommand = defineCommand({
  name: 'show',
  summary: 'A loop: status, phase, iterations with gates, findings and verdicts, escalations',
  positionals: ['loopId'],
  usage: '<loopId>',
  details: 'With --json, prints GET /v1/loops/:id as it is (contract versions, gate plan, evidence, findings).',
  options: {},
  input: z.object({ loopId: loopIdArg }),
  run: async (input, ctx) => {
    const loop = (await ctx.api().get<LoopDetail>(`/v1/loops/${input.loopId}`)).body;
    ctx.io.out(ctx.json ? JSON.stringify(loop) : loopSummaryText(loop));
    return 0;
  },
});
