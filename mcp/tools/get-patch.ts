import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { loopIdInput } from '../inputs';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// get_patch → GET /v1/loops/:id/patch (text/x-patch).

export function registerGetPatch(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'get_patch',
    {
      title: "Read a loop's patch",
      description:
        'The delivered change as `git format-patch` output, to apply with `git am` (or `git apply`) on the base commit. Exists once the loop has passed or been approved.',
      inputSchema: { loopId: loopIdInput },
      outputSchema: z.object({ loopId: z.string(), patch: z.string() }),
      annotations: { readOnlyHint: true },
    },
    ({ loopId }) =>
      answer(async () => {
        const patch = (await ctx.api.get<string>(`/v1/loops/${loopId}/patch`, { as: 'text' })).body;
        return toolResult({ loopId, patch }, patch);
      }),
  );
}
