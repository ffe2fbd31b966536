import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { loopDetailSchema } from '../../api/schemas';
import type { LoopDetail } from '../../cli/api-types';
import { loopIdInput } from '../inputs';
import { loopDetailText } from '../render';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// get_loop → GET /v1/loops/:id.

export function registerGetLoop(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'get_loop',
    {
      title: 'Get a loop',
      description:
        "A loop's status, phase and iteration, with every iteration's gate results, review findings and verdict, its escalations and its delivery.",
      inputSchema: { loopId: loopIdInput },
      outputSchema: loopDetailSchema,
      annotations: { readOnlyHint: true },
    },
    ({ loopId }) =>
      answer(async () => {
        const loop = (await ctx.api.get<LoopDetail>(`/v1/loops/${loopId}`)).body;
        return toolResult({ ...loop }, loopDetailText(loop));
      }),
  );
}
