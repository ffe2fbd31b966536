import type { FastifyPluginAsync } from 'fastify';
import { createLoopStateRegistry, prismaLoopStateQueries } from '../../telemetry/loop-state-metrics';
import { metricsAuthorized } from '../../telemetry/metrics-access';
import { EXPOSITION_CONTENT_TYPE, exposition, processRegistry } from '../../telemetry/registry';
import type { RouteDeps } from '../deps';
import { ApiError } from '../errors';

/**
 * GET /metrics (Prometheus text format): the API process's metrics (workers serve their own on
 * WORKER_METRICS_PORT) and the loop-state gauges read from PostgreSQL at scrape time.
 * Public like /healthz (no API key: a scraper is no user), unless METRICS_TOKEN asks for a bearer token.
 */
export const metricsRoutes: FastifyPluginAsync<RouteDeps> = async (app, deps) => {
  const token = deps.policy.metricsToken ?? null;
  const loopState = createLoopStateRegistry(prismaLoopStateQueries(deps.prisma));
  app.get('/metrics', {
    config: { access: 'public' },
    schema: { hide: true },
    handler: async (request, reply) => {
      if (!metricsAuthorized(request.headers.authorization, token)) {
        throw new ApiError(401, 'metrics need Authorization: Bearer <METRICS_TOKEN>', { 'www-authenticate': 'Bearer' });
      }
      const text = await exposition([processRegistry, loopState]);
      return reply.type(EXPOSITION_CONTENT_TYPE).send(text);
    },
  });
};
