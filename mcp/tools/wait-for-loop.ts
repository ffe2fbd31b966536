import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { loopSummarySchema } from '../../api/schemas';
import type { LoopDetail } from '../../cli/api-types';
import { openEscalation } from '../../cli/render/loop';
import { loopIdInput } from '../inputs';
import { decideHint, loopStateLine } from '../render';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';
import { waitForLoop, type WaitResult } from '../wait';

// wait_for_loop: reads GET /v1/loops/:id until the loop ends or waits for a decision, at most
// timeoutSeconds. Changes of status, phase or iteration go out as progress notifications when the client
// asked for them (a progress token), and at least every HEARTBEAT_MS, so a client that resets its own
// timeout on progress can wait long.

const DEFAULT_WAIT_SECONDS = 50;
const MAX_WAIT_SECONDS = 600;
const HEARTBEAT_MS = 15_000;

const outputSchema = z.object({
  outcome: z
    .enum(['ended', 'awaiting_decision', 'timed_out', 'interrupted'])
    .describe(
      'ended: a final status (PASSED, APPROVED, REJECTED, FAILED, CANCELLED, TERMINATED); awaiting_decision: a human must decide; timed_out: still running, wait again; interrupted: the server stopped or the call was cancelled',
    ),
  waitedSeconds: z.number(),
  loop: loopSummarySchema.extend({ failureReason: z.string().nullable() }),
  openEscalation: z
    .object({ id: z.string(), sequence: z.number().int(), trigger: z.string() })
    .nullable()
    .describe('The escalation to decide when the outcome is awaiting_decision'),
});

export function registerWaitForLoop(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'wait_for_loop',
    {
      title: 'Wait for a loop',
      description: `Waits until a loop ends or needs a human decision, for at most timeoutSeconds (default ${DEFAULT_WAIT_SECONDS}); then answers with its state. On timed_out, call it again. Keep timeoutSeconds below your client's own time limit for a tool call.`,
      inputSchema: {
        loopId: loopIdInput,
        timeoutSeconds: z
          .number()
          .int()
          .min(1)
          .max(MAX_WAIT_SECONDS)
          .default(DEFAULT_WAIT_SECONDS)
          .describe('How long to wait at most, in seconds'),
      },
      outputSchema,
      annotations: { readOnlyHint: true },
    },
    ({ loopId, timeoutSeconds }, extra) =>
      answer(async () => {
        const progressToken = extra._meta?.progressToken;
        const result = await waitForLoop(async () => (await ctx.api.get<LoopDetail>(`/v1/loops/${loopId}`)).body, {
          timeoutMs: timeoutSeconds * 1000,
          pollIntervalMs: ctx.pollIntervalMs,
          heartbeatMs: HEARTBEAT_MS,
          signal: AbortSignal.any([extra.signal, ctx.stopping]),
          onProgress: async (loop, elapsedMs) => {
            if (progressToken === undefined) return;
            await extra.sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken,
                progress: elapsedMs / 1000,
                total: timeoutSeconds,
                message: loopStateLine(loop),
              },
            });
          },
        });
        return toolResult(waitAnswer(result), waitText(result));
      }),
  );
}

function waitAnswer({ outcome, loop, elapsedMs }: WaitResult): z.infer<typeof outputSchema> {
  const open = loop.status === 'AWAITING_DECISION' ? openEscalation(loop) : undefined;
  return {
    outcome,
    waitedSeconds: Math.round(elapsedMs / 100) / 10,
    loop: outputSchema.shape.loop.parse({ ...loop, failureReason: loop.failureReason ?? null }),
    openEscalation: open ? { id: open.id, sequence: open.sequence, trigger: open.trigger } : null,
  };
}

function waitText(result: WaitResult): string {
  const { outcome, loop } = result;
  const state = loopStateLine(loop);
  const open = openEscalation(loop);
  switch (outcome) {
    case 'ended':
      return `${state} has ended.${loop.failureReason ? ` Failure: ${loop.failureReason}.` : ''} Read the report with get_report${loop.status === 'PASSED' || loop.status === 'APPROVED' ? ' and the change with get_patch' : ''}.`;
    case 'awaiting_decision':
      return open ? `${state}. ${decideHint(loop.id, open)}` : state;
    case 'timed_out':
      return `${state} is still going after ${Math.round(result.elapsedMs / 1000)} s; call wait_for_loop again.`;
    case 'interrupted':
      return `${state}: the wait was interrupted (the server is stopping or the call was cancelled); call wait_for_loop again.`;
  }
}
