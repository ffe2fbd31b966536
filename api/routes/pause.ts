import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { TERMINAL_STATUSES, type LoopStatus } from '../../domain/loop-state';
import { authErrorResponses, requirePrincipal } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';
import { bodyErrorResponses, conflict, errorResponseSchema } from '../errors';
import { loadLoop } from '../load-loop';
import { sendPause } from '../loop-pause';
import { loopIdParamsSchema, pauseAnswerSchema, pauseBodySchema } from '../schemas';

// Pause and resume (docs/api.md): a paused loop finishes its current step and holds before its next maker.

const errors = {
  400: errorResponseSchema,
  404: errorResponseSchema,
  409: errorResponseSchema,
  422: errorResponseSchema,
  ...authErrorResponses,
};

export const pauseRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  r.post('/v1/loops/:id/pause', {
    config: { access: 'submitter' },
    schema: {
      tags: ['loops'],
      summary: 'Pause a loop: it finishes its current step and holds, durably, before its next maker',
      description:
        'Pausing a paused loop changes nothing. A loop awaiting a decision stays paused after it: a retry or amend holds before the maker. 409 once the loop has ended.',
      params: loopIdParamsSchema,
      body: pauseBodySchema,
      response: { 202: pauseAnswerSchema, ...errors, ...bodyErrorResponses },
    },
    handler: async (request, reply) => {
      const loop = await runningLoop(deps, request.params.id, 'pause');
      const principal = requirePrincipal(request);
      const receipt = await sendPause(deps, loop.workflowId, {
        pause: true,
        actor: `${principal.name} (key ${principal.keyId})`,
        reason: request.body?.reason ?? null,
      });
      return reply.code(202).send({
        loopId: loop.id,
        ...receipt,
        message: receipt.holding
          ? 'the loop is paused'
          : 'the loop pauses once its current step is done, before its next maker',
      });
    },
  });

  r.post('/v1/loops/:id/resume', {
    config: { access: 'submitter' },
    schema: {
      tags: ['loops'],
      summary: 'Resume a paused loop; resuming a loop that is not paused changes nothing',
      params: loopIdParamsSchema,
      response: { 202: pauseAnswerSchema, ...errors },
    },
    handler: async (request, reply) => {
      const loop = await runningLoop(deps, request.params.id, 'resume');
      const principal = requirePrincipal(request);
      const receipt = await sendPause(deps, loop.workflowId, {
        pause: false,
        actor: `${principal.name} (key ${principal.keyId})`,
      });
      return reply.code(202).send({ loopId: loop.id, ...receipt, message: 'the loop goes on' });
    },
  });
};

async function runningLoop(deps: RouteDeps, id: string, verb: string) {
  const loop = await loadLoop(deps.prisma, id);
  if (TERMINAL_STATUSES.includes(loop.status as LoopStatus))
    throw conflict(`loop ${id} has ended (${loop.status}); there is nothing to ${verb}`);
  if (loop.status === 'QUEUED') throw conflict(`loop ${id} has not started yet; ${verb} it once it runs`);
  return loop;
}
