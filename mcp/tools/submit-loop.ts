import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { SubmittedLoop } from '../../cli/api-types';
import { loopRequestSchema } from '../../domain/loop-request';
import { submitLoopHeadersSchema, submittedLoopSchema } from '../../api/schemas';
import { loopStateLine } from '../render';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// submit_loop → POST /v1/loops (the task is the request body; the idempotency key its header).

const submitLoopInput = {
  task: loopRequestSchema.describe(
    'The coding task: the body of POST /v1/loops (repository, contract with acceptance criteria, gates, maker, …); see docs/api.md',
  ),
  idempotencyKey: submitLoopHeadersSchema.shape['idempotency-key'].describe(
    'Submitting again with the same key answers with the loop it started instead of starting another',
  ),
};

export function registerSubmitLoop(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'submit_loop',
    {
      title: 'Submit a coding task',
      description:
        'Starts an engineering loop on a repository: a maker changes the code until the verification gates and an independent review pass, or a human must decide. Answers at once with the loop (status QUEUED); follow it with wait_for_loop. Needs a submitter (or admin) API key.',
      inputSchema: submitLoopInput,
      outputSchema: submittedLoopSchema.extend({
        created: z.boolean().describe('false when the idempotency key named a loop submitted before'),
      }),
    },
    (args) =>
      answer(async () => {
        const headers: Record<string, string> =
          args.idempotencyKey === undefined ? {} : { 'idempotency-key': args.idempotencyKey };
        const sent = await ctx.api.post<SubmittedLoop>('/v1/loops', args.task, { headers });
        const created = sent.status === 201;
        const loop = sent.body;
        const text = created
          ? `Submitted ${loopStateLine(loop)} on ${loop.repository.url} (${loop.repository.baseRef}). Follow it with wait_for_loop.`
          : `Already submitted with idempotency key "${args.idempotencyKey}": ${loopStateLine(loop)}.`;
        const notes = loop.notes ?? [];
        return toolResult({ ...loop, notes, created }, [text, ...notes.map((note) => `Note: ${note}`)].join('\n'));
      }),
  );
}
