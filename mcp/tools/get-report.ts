import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { z } from 'zod';
import { reportSchema } from '../../api/schemas';
import { loopIdInput } from '../inputs';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// get_report → GET /v1/loops/:id/report.

export function registerGetReport(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'get_report',
    {
      title: "Read a loop's report",
      description:
        "The loop's final report once it has ended (what changed, the evidence, findings, delivery), or its latest escalation report while a decision is pending: Markdown as text, the structured body as structured content.",
      inputSchema: { loopId: loopIdInput },
      outputSchema: reportSchema,
      annotations: { readOnlyHint: true },
    },
    ({ loopId }) =>
      answer(async () => {
        const report = (await ctx.api.get<z.infer<typeof reportSchema>>(`/v1/loops/${loopId}/report`)).body;
        return toolResult({ ...report }, report.markdown);
      }),
  );
}
