import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { acceptedSchema } from '../../api/schemas';
import type { Accepted } from '../../cli/api-types';
import { loopIdInput } from '../inputs';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// cancel_loop → POST /v1/loops/:id/cancel.

export function registerCancelLoop(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'cancel_loop',
    {
      title: 'Cancel a loop',
      description:
        'Stops a loop that has not ended: running commands are stopped and the loop ends CANCELLED (wait_for_loop shows when). Needs a submitter (or admin) API key.',
      inputSchema: { loopId: loopIdInput },
      outputSchema: acceptedSchema,
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    ({ loopId }) =>
      answer(async () => {
        const accepted = (await ctx.api.post<Accepted>(`/v1/loops/${loopId}/cancel`, undefined)).body;
        return toolResult(
          { ...accepted },
          `Cancellation of loop ${accepted.loopId} requested (${accepted.status}); wait_for_loop shows when it has ended.`,
        );
      }),
  );
}
