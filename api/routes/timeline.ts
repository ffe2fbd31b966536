import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { authErrorResponses } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';
import { errorResponseSchema } from '../errors';
import { explainIteration } from '../loop-explain';
import { loopTimeline } from '../loop-timeline';
import { loopIdParamsSchema } from '../schemas';
import { explainParamsSchema, explainSchema, timelineSchema } from '../timeline-schemas';

// A loop's audit timeline and the explanation of each verdict. Read-only, like GET /v1/loops/:id: any
// valid API key (routes without config.access answer GETs to every role).

const errors = { 400: errorResponseSchema, 404: errorResponseSchema, ...authErrorResponses };

export const timelineRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  r.get('/v1/loops/:id/timeline', {
    schema: {
      tags: ['loops'],
      summary:
        "The loop's timeline: phases with their durations, contract versions, commands, model calls, verdicts, escalations and decisions, in time order",
      params: loopIdParamsSchema,
      response: { 200: timelineSchema, ...errors },
    },
    handler: async (request) => loopTimeline(deps.prisma, request.params.id),
  });

  r.get('/v1/loops/:id/iterations/:n/explain', {
    schema: {
      tags: ['loops'],
      summary:
        "Why iteration n's verdict was reached: the rule that fired, the judge's reasons in order, and the inputs it used",
      params: explainParamsSchema,
      response: { 200: explainSchema, ...errors },
    },
    handler: async (request) => explainIteration(deps.prisma, request.params.id, request.params.n),
  });
};
