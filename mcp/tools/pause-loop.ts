import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { pauseAnswerSchema } from '../../api/schemas';
import { loopIdInput } from '../inputs';
import type { ToolContext } from '../tool-context';
import { answer, toolResult } from '../tool-result';

// pause_loop → POST /v1/loops/:id/pause; resume_loop → POST /v1/loops/:id/resume.

type PauseAnswer = z.infer<typeof pauseAnswerSchema>;

export function registerPauseLoop(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'pause_loop',
    {
      title: 'Pause a loop',
      description:
        'Pauses a loop that has not ended: it finishes its current step (maker, verification, review, or a decision being awaited) and holds before its next maker, status PAUSED, until resume_loop. Needs a submitter (or admin) API key.',
      inputSchema: { loopId: loopIdInput, reason: z.string().trim().min(1).max(2000).optional() },
      outputSchema: pauseAnswerSchema,
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    ({ loopId, reason }) =>
      answer(async () => {
        const paused = (await ctx.api.post<PauseAnswer>(`/v1/loops/${loopId}/pause`, reason ? { reason } : {})).body;
        return toolResult({ ...paused }, `Loop ${paused.loopId}: ${paused.message}.`);
      }),
  );
  server.registerTool(
    'resume_loop',
    {
      title: 'Resume a paused loop',
      description:
        'Lets a paused loop go on; resuming a loop that is not paused changes nothing. Needs a submitter (or admin) API key.',
      inputSchema: { loopId: loopIdInput },
      outputSchema: pauseAnswerSchema,
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    ({ loopId }) =>
      answer(async () => {
        const resumed = (await ctx.api.post<PauseAnswer>(`/v1/loops/${loopId}/resume`, undefined)).body;
        return toolResult({ ...resumed }, `Loop ${resumed.loopId}: ${resumed.message}.`);
      }),
  );
}
