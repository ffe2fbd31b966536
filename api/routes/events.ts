import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findLoop } from '../../store/loops';
import { authErrorResponses, requirePrincipal } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';
import { ApiError, errorResponseSchema, notFound } from '../errors';
import { FEED_START, nextBatch } from '../loop-event-feed';
import { EventStreams, serveLoopEvents, STREAM_LIMITS } from '../loop-event-stream';
import { recordRunEndedOutside } from '../run-ended-outside';
import { loopIdParamsSchema } from '../schemas';

// A loop's live events (server-sent events). Read-only like the timeline: any valid API key.

const headersSchema = z.object({
  'last-event-id': z
    .string()
    .regex(/^\d{1,15}$/, { error: 'must be the id of an event this stream sent (digits)' })
    .optional()
    .describe(
      'Resume after this event: the `id` of the last event received. Without it the stream starts at the beginning',
    ),
});

/** One event of the stream, as OpenAPI before 3.2 describes the items of `text/event-stream`. */
const eventSchema = z.object({
  event: z.enum(['message', 'end']).optional().describe('`end` once, last; a timeline event otherwise'),
  id: z.string().optional().describe('Where to resume after (`Last-Event-ID`): on the last event of each commit'),
  retry: z.number().int().optional(),
  data: z
    .string()
    .describe(
      'JSON: a timeline event, as one entry of `GET /v1/loops/:id/timeline` answers it; for `end`, `{ loopId, status, phase }`',
    ),
});

const DESCRIPTION = [
  'Each event is a timeline event (the same JSON as one entry of `GET /v1/loops/:id/timeline`) in its `data` field:',
  'phases, contract versions, commands, model calls, verdicts, escalations and decisions. Events come in the order',
  'their records were committed (within one commit, in time order); a record that changes later (an escalation',
  'being decided) is sent again with its new content. The last event of each commit carries an `id`; reconnect',
  'with it as `Last-Event-ID` to get everything after it. A comment line comes every',
  `${STREAM_LIMITS.heartbeatMs / 1000} s when nothing else does. When the loop has ended and everything was`,
  'sent, an `end` event carries `{ loopId, status, phase }` and the stream closes. At most',
  `${STREAM_LIMITS.perKey} streams may be open per API key (429 beyond).`,
].join(' ');

export const eventRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  const streams = new EventStreams();
  // Open streams would hold the server's close for ever: they end first, and clients reconnect.
  r.addHook('preClose', async () => streams.closeAll());

  r.get('/v1/loops/:id/events', {
    schema: {
      tags: ['loops'],
      summary: "The loop's timeline as server-sent events, then new events as they happen",
      description: DESCRIPTION,
      params: loopIdParamsSchema,
      headers: headersSchema,
      response: {
        200: { content: { 'text/event-stream': { schema: eventSchema } } },
        400: errorResponseSchema,
        404: errorResponseSchema,
        ...authErrorResponses,
      },
    },
    handler: async (request, reply) => {
      const loopId = request.params.id;
      const noticeRunEnded = async () => {
        const row = await findLoop(deps.prisma, loopId);
        if (row) await recordRunEndedOutside(deps, row);
      };
      await noticeRunEnded();
      const after = request.headers['last-event-id'];
      const first = await nextBatch(deps.prisma, loopId, after === undefined ? FEED_START : Number(after));
      if (!first) throw notFound(`loop ${loopId}`);
      if (after !== undefined && Number(after) >= first.horizon) {
        throw new ApiError(400, `headers.last-event-id: ${after} is not an event of this service's stream`);
      }
      const release = streams.claim(requirePrincipal(request).keyId);
      const writes = deps.loopWrites;
      reply.hijack();
      try {
        await serveLoopEvents(
          reply.raw,
          first,
          {
            prisma: deps.prisma,
            loopId,
            log: request.log,
            onHeartbeat: noticeRunEnded,
            subscribe: writes ? (onWrite) => writes.subscribe(loopId, onWrite) : undefined,
          },
          streams,
        );
      } finally {
        release();
      }
    },
  });
};
