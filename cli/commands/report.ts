import { z } from 'zod';
import type { Report } from '../api-types';
import { defineCommand } from '../command';
import { loopIdArg } from '../inputs';

// GET /v1/loops/:id/report: what the loop tells a person, as markdown.

export const reportCommand = defineCommand({
  name: 'report',
  summary: "A loop's final report, or its latest escalation report while it has none (markdown)",
  positionals: ['loopId'],
  usage: '<loopId>',
  details:
    'With --json, prints GET /v1/loops/:id/report as it is: kind (FINAL or ESCALATION), key, createdAt, body, markdown.',
  options: {},
  input: z.object({ loopId: loopIdArg }),
  run: async (input, ctx) => {
    const report = (await ctx.api().get<Report>(`/v1/loops/${input.loopId}/report`)).body;
    ctx.io.out(ctx.json ? JSON.stringify(report) : report.markdown.replace(/\n+$/, ''));
    return 0;
  },
});
