import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { acceptedSchema } from '../../api/schemas';
import type { Accepted } from '../../cli/api-types';
import { decisionRequestSchema } from '../../domain/decision';
import { loopIdInput } from '../inputs';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// decide_escalation → POST /v1/loops/:id/decisions with the decision as the body.

const decideEscalationInput = {
  loopId: loopIdInput,
  decision: decisionRequestSchema.describe(
    'approve (deliver the checkpoint as it is), reject (end the loop REJECTED), retry with guidance for the maker, or amend the contract fields given; escalationId names the open escalation (from list_escalations or wait_for_loop)',
  ),
};

export function registerDecideEscalation(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'decide_escalation',
    {
      title: 'Decide an escalation',
      description:
        'Answers the escalation a loop waits on. The decision is recorded under the API key’s name. Needs an approver (or admin) API key; the operator may forbid deciding a loop the same key submitted.',
      inputSchema: decideEscalationInput,
      outputSchema: acceptedSchema,
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    ({ loopId, decision }) =>
      answer(async () => {
        const accepted = (await ctx.api.post<Accepted>(`/v1/loops/${loopId}/decisions`, decision)).body;
        return toolResult(
          { ...accepted },
          `${accepted.message} (loop ${accepted.loopId}).${decision.kind === 'reject' ? '' : ' Follow it with wait_for_loop.'}`,
        );
      }),
  );
}
