import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { agentRoutes } from './routes/agents';
import { apiKeyRoutes } from './auth/api-key-routes';
import { API_KEY_REDACT_PATHS, DEFAULT_PUBLIC_ROUTES, registerAuth } from './auth/auth-plugin';
import { DEFAULT_API_POLICY, type AppDeps, type RouteDeps } from './deps';
import { answerFrameworkError, registerErrorHandler } from './errors';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { escalationRoutes } from './routes/escalations';
import { inboxRoutes } from './routes/inbox';
import { loopRoutes } from './routes/loops';
import { mcpRoutes } from './routes/mcp';
import { metricsRoutes } from './routes/metrics';
import { diffRoutes } from './routes/diff';
import { pauseRoutes } from './routes/pause';
import { policyRoutes } from './routes/policy';
import { timelineRoutes } from './routes/timeline';
import { sanitiseAnswers, sanitiseLogLine } from './sanitise-output';
import { EVERY_REQUEST_REFUSALS } from './refusal-rules';
import { rejectUnstorableText } from './storable-input';
import { registerHttpMetrics } from '../telemetry/http-metrics';
import { registerHttpTracing } from '../telemetry/http-tracing';
import { registerRequestLogging } from './request-logging';

/** Builds the HTTP API; `service/` decides where it listens. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: deps.logLevel ?? 'info',
      redact: [...API_KEY_REDACT_PATHS],
      hooks: { streamWrite: sanitiseLogLine },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    // Requests are logged at debug instead (request-logging.ts).
    disableRequestLogging: true,
    genReqId: () => crypto.randomUUID(),
    frameworkErrors: answerFrameworkError,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerRequestLogging(app);
  registerErrorHandler(app);
  sanitiseAnswers(app);
  rejectUnstorableText(app);
  // Before auth, so requests it answers are timed (and traced) too.
  registerHttpTracing(app);
  registerHttpMetrics(app);
  // Before any route, so every route is behind it; routes declare who may call them in config.access.
  await registerAuth(app, {
    prisma: deps.prisma,
    rateLimit: deps.rateLimit ?? { max: 600, timeWindowMs: 60_000 },
    publicRoutes: [...DEFAULT_PUBLIC_ROUTES, '/inbox'],
  });
  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'AI engineering loop',
        description: `Submit coding tasks, follow their loops, decide escalations.\n\n${EVERY_REQUEST_REFUSALS}`,
        version: '0.1.0',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  // Each route group is a plugin registered after auth, swagger and the error handler, so it inherits them.
  const routeDeps: RouteDeps = {
    prisma: deps.prisma,
    temporal: deps.temporal,
    taskQueue: deps.taskQueue,
    policy: deps.policy ?? DEFAULT_API_POLICY,
    serviceStatus: deps.serviceStatus ?? (() => null),
    loopWrites: deps.loopWrites ?? null,
  };
  await app.register(healthRoutes, routeDeps);
  await app.register(loopRoutes, routeDeps);
  await app.register(pauseRoutes, routeDeps);
  await app.register(diffRoutes, routeDeps);
  await app.register(timelineRoutes, routeDeps);
  await app.register(eventRoutes, routeDeps);
  await app.register(escalationRoutes, routeDeps);
  await app.register(inboxRoutes);
  await app.register(apiKeyRoutes, { prisma: deps.prisma });
  await app.register(metricsRoutes, routeDeps);
  await app.register(policyRoutes, routeDeps);
  await app.register(agentRoutes, routeDeps);
  await app.register(mcpRoutes);
  return app;
}
