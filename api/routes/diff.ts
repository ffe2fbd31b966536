import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authErrorResponses } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';
import { errorResponseSchema, notFound } from '../errors';
import { loadLoop } from '../load-loop';
import { plainTextOn200 } from '../plain-text-answer';
import { loopIdParamsSchema } from '../schemas';
import { iterationDiff } from '../../store/iteration-diffs';

// The change a person decides on, before anything is delivered: an iteration's `git diff` from the loop's
// base, stored by the worker (store/iteration-diffs.ts), since the API may not see the worker's disk.

const errors = { 400: errorResponseSchema, 404: errorResponseSchema, ...authErrorResponses };

export const diffRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  r.get('/v1/loops/:id/diff', {
    schema: {
      tags: ['loops'],
      summary: "An iteration's change from the loop's base as `git diff` text, before or after delivery",
      description:
        "The latest iteration's unless `iteration` names one. Headers: `X-Iteration` (the iteration), `X-Checkpoint` (its commit), `X-Diff-Bytes` (the whole diff's size) and `X-Diff-Truncated` (`true` when the text stops at a line end past 1 MiB). 404 while no iteration has a stored change.",
      params: loopIdParamsSchema,
      querystring: z.strictObject({ iteration: z.coerce.number().int().min(1).max(100_000).optional() }),
      response: { 200: { content: { 'text/x-diff': { schema: z.string() } } }, ...errors },
    },
    serializerCompiler: plainTextOn200,
    handler: async (request, reply) => {
      const { id } = await loadLoop(deps.prisma, request.params.id);
      const { iteration } = request.query;
      const diff = await iterationDiff(deps.prisma, id, iteration);
      if (!diff)
        throw notFound(
          iteration === undefined
            ? `a change of loop ${id} (none until its maker has made one)`
            : `a change of iteration ${iteration} of loop ${id}`,
        );
      return reply
        .type('text/x-diff; charset=utf-8')
        .header('x-iteration', String(diff.sequence))
        .header('x-checkpoint', diff.checkpointCommit ?? '')
        .header('x-diff-bytes', String(diff.bytes))
        .header('x-diff-truncated', String(diff.truncated))
        .send(diff.text);
    },
  });
};
