import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { loopIdInput } from '../inputs';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// get_diff → GET /v1/loops/:id/diff (text/x-diff): the change a decision is about, before delivery.

export function registerGetDiff(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'get_diff',
    {
      title: "Read a loop's change",
      description:
        "An iteration's change from the loop's base as `git diff` text (the latest iteration's unless `iteration` is given): what a decision on an escalation approves or sends back, readable before anything is delivered. `truncated` is true when the text stops past 1 MiB.",
      inputSchema: { loopId: loopIdInput, iteration: z.number().int().min(1).optional() },
      outputSchema: z.object({ loopId: z.string(), iteration: z.number(), truncated: z.boolean(), diff: z.string() }),
      annotations: { readOnlyHint: true },
    },
    ({ loopId, iteration }) =>
      answer(async () => {
        const res = await ctx.api.get<string>(`/v1/loops/${loopId}/diff`, { as: 'text', query: { iteration } });
        const shown = {
          loopId,
          iteration: Number(res.headers?.get('x-iteration')),
          truncated: res.headers?.get('x-diff-truncated') === 'true',
          diff: res.body,
        };
        return toolResult(shown, res.body);
      }),
  );
}
