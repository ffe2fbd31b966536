import { z } from 'zod';
import { defineCommand } from '../command';
import { loopIdArg, textOption } from '../inputs';

// POST /v1/loops/:id/pause and /resume: a paused loop finishes its current step and holds before its next maker.

interface PauseAnswer {
  loopId: string;
  paused: boolean;
  holding: boolean;
  message: string;
}

export const pauseCommand = defineCommand({
  name: 'pause',
  summary: 'Pause a loop: it finishes its current step and holds before its next maker',
  positionals: ['loopId'],
  usage: '<loopId> [--reason R]',
  details: [
    'The loop finishes what it is doing (a maker, a verification, a review, a decision it awaits) and then',
    'shows PAUSED until `engineering-loop resume <loopId>`. Pausing a paused loop changes nothing; a loop',
    'that has ended is refused (409). Needs a submitter (or admin) key. With --json, prints the API answer.',
  ].join('\n'),
  options: { reason: { type: 'string', value: 'R', description: 'why, shown with the loop while it is paused' } },
  input: z.object({ loopId: loopIdArg, reason: textOption(2000) }),
  run: async (input, ctx) => {
    const body = input.reason ? { reason: input.reason } : {};
    const answer = (await ctx.api().post<PauseAnswer>(`/v1/loops/${input.loopId}/pause`, body)).body;
    ctx.io.out(ctx.json ? JSON.stringify(answer) : `loop ${input.loopId}: ${answer.message}`);
    return 0;
  },
});

export const resumeCommand = defineCommand({
  name: 'resume',
  summary: 'Resume a paused loop',
  positionals: ['loopId'],
  usage: '<loopId>',
  details: 'Resuming a loop that is not paused changes nothing. Needs a submitter (or admin) key.',
  options: {},
  input: z.object({ loopId: loopIdArg }),
  run: async (input, ctx) => {
    const answer = (await ctx.api().post<PauseAnswer>(`/v1/loops/${input.loopId}/resume`, undefined)).body;
    ctx.io.out(ctx.json ? JSON.stringify(answer) : `loop ${input.loopId}: ${answer.message}`);
    return 0;
  },
});
