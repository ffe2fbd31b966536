import { z } from 'zod';
import { ApiError } from '../api-client';
import type { Timeline } from '../api-types';
import { defineCommand } from '../command';
import { CliError } from '../errors';
import { loopIdArg } from '../inputs';
import { timelineText } from '../render/timeline';
import { shapeProblems, timelineSchema } from '../timeline-schema';

// GET /v1/loops/:id/timeline: phases, contract versions, commands, model calls, verdicts, escalations
// and decisions in the order they happened. Older servers do not have the route.

export const timelineCommand = defineCommand({
  name: 'timeline',
  summary: "A loop's events in order: time, kind, iteration, duration, title",
  positionals: ['loopId'],
  usage: '<loopId>',
  details:
    'Kinds: phase, contract, command, model_call, verdict, escalation, decision, refused_decision, egress_refused, waiting.\nWith --json, prints GET /v1/loops/:id/timeline as it is (each event has its detail).',
  options: {},
  input: z.object({ loopId: loopIdArg }),
  run: async (input, ctx) => {
    const api = ctx.api();
    let answer: unknown;
    try {
      answer = (await api.get<unknown>(`/v1/loops/${input.loopId}/timeline`)).body;
    } catch (error) {
      if (error instanceof ApiError && error.routeNotFound) {
        throw new CliError(
          `the server at ${api.baseUrl} is too old for timeline: it has no GET /v1/loops/:id/timeline`,
          'upgrade the service, or use: engineering-loop show',
        );
      }
      throw error;
    }
    if (ctx.json) {
      ctx.io.out(JSON.stringify(answer));
      return 0;
    }
    const parsed = timelineSchema.safeParse(answer);
    if (!parsed.success) {
      throw new CliError(
        `the server's timeline answer has an unexpected shape (${shapeProblems(parsed.error)})`,
        'engineering-loop timeline --json prints it as it is',
      );
    }
    ctx.io.out(timelineText(parsed.data as Timeline));
    return 0;
  },
});
