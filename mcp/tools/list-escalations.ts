import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { dateTime, truncate } from '../../cli/render/format';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// list_escalations → GET /v1/escalations: what waits for a human decision, oldest first, with reports.

/** The fields of GET /v1/escalations' entries this tool reads (api/routes/escalations.ts); the rest pass through. */
const escalationSchema = z.looseObject({
  id: z.string(),
  loopId: z.string(),
  repository: z.object({ url: z.string(), baseRef: z.string() }),
  objective: z.string().nullable(),
  trigger: z.string(),
  sequence: z.number().int(),
  createdAt: z.string(),
  report: z
    .looseObject({
      markdown: z.string(),
      body: z
        .looseObject({
          coreBlocker: z.string(),
          options: z.array(z.looseObject({ decision: z.string(), description: z.string() })),
        })
        .nullable(),
    })
    .nullable(),
});
type OpenEscalation = z.infer<typeof escalationSchema>;

const listEscalationsInput = {
  limit: z.number().int().min(1).max(200).optional().describe('At most this many (default 100)'),
};

export function registerListEscalations(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'list_escalations',
    {
      title: 'List escalations awaiting a decision',
      description:
        'Every escalation still waiting for a human decision, oldest first: its loop, trigger, and escalation report (what was tried, the core blocker, the options). Decide one with decide_escalation.',
      inputSchema: listEscalationsInput,
      outputSchema: z.object({ escalations: z.array(escalationSchema) }),
      annotations: { readOnlyHint: true },
    },
    ({ limit }) =>
      answer(async () => {
        const listed = (await ctx.api.get<{ escalations: OpenEscalation[] }>('/v1/escalations', { query: { limit } }))
          .body;
        return toolResult({ ...listed }, escalationsText(listed.escalations));
      }),
  );
}

function escalationsText(escalations: OpenEscalation[]): string {
  if (!escalations.length) return 'No escalation is waiting for a decision.';
  const entries = escalations.map((e) => {
    const lines = [
      `escalation #${e.sequence} ${e.trigger} (id ${e.id}) on loop ${e.loopId}, opened ${dateTime(e.createdAt)}`,
      `  ${e.objective ? truncate(e.objective, 160) : '(no objective)'} — ${e.repository.url} (${e.repository.baseRef})`,
    ];
    const body = e.report?.body;
    if (body) {
      lines.push(`  core blocker: ${truncate(body.coreBlocker, 300)}`);
      lines.push(`  options: ${body.options.map((o) => o.decision).join(', ')}`);
    }
    return lines.join('\n');
  });
  return [
    `${escalations.length} escalation${escalations.length === 1 ? '' : 's'} waiting for a decision:`,
    ...entries,
    'The full reports are in the structured content (report.markdown); decide with decide_escalation.',
  ].join('\n');
}
