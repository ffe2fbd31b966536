import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { Client } from '@temporalio/client';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { PrismaClient } from '../prisma/client';
import type { ServiceConfig } from '../config/service-config';
import { apiKeyRoutes } from './auth/api-key-routes';
import { API_KEY_REDACT_PATHS, DEFAULT_PUBLIC_ROUTES, registerAuth } from './auth/auth-plugin';
import { answerFrameworkError, registerErrorHandler } from './errors';
import { healthRoutes } from './routes/health';
import { escalationRoutes } from './routes/escalations';
import { inboxRoutes } from './routes/inbox';
import { loopRoutes } from './routes/loops';
import { metricsRoutes } from './routes/metrics';
import { timelineRoutes } from './routes/timeline';
import { sanitiseAnswers, sanitiseLogLine } from './sanitise-output';
import { rejectUnstorableText } from './storable-input';
import { registerHttpMetrics } from '../telemetry/http-metrics';
import { registerHttpTracing } from '../telemetry/http-tracing';

export interface AppDeps {
  prisma: PrismaClient;
  temporal: Client;
  taskQueue: string;
  logLevel?: string;
  /** Requests per API key (or per IP without one) in each window. */
  rateLimit?: { max: number; timeWindowMs: number };
  /** The operator's switches the API enforces (repository sources, decision rules, sandbox status). */
  policy?: ApiPolicy;
}

export type ApiPolicy = Pick<ServiceConfig, 'repositories' | 'decisions'> & {
  sandbox: Pick<ServiceConfig['sandbox'], 'mode'>;
  /** New loops are refused while the disk holding `path` has less than `minFreeBytes` free. */
  disk: { path: string; minFreeBytes: number };
  /** Names of the configured git credentials (no secrets); null or absent: this process has none, the worker checks. */
  credentialNames?: string[] | null;
  /** GET /metrics answers only `Authorization: Bearer <token>` when set; null or absent: public. */
  metricsToken?: string | null;
};

/** Without configuration the API enforces the same defaults as the service's environment schema. */
export const DEFAULT_API_POLICY: ApiPolicy = {
  repositories: { allowLocal: true, connectTimeoutSeconds: 20 },
  decisions: { allowDeadlineApprove: false, separationOfDuties: false, signalActors: [] },
  sandbox: { mode: 'bwrap' },
  disk: { path: '.', minFreeBytes: 0 },
};

export function apiPolicy(config: Readonly<ServiceConfig>): ApiPolicy {
  return {
    repositories: config.repositories,
    decisions: config.decisions,
    sandbox: { mode: config.sandbox.mode },
    disk: { path: config.dataDir, minFreeBytes: config.minFreeDiskBytes },
    credentialNames: config.gitCredentials ? Object.keys(config.gitCredentials) : null,
    metricsToken: config.telemetry.metricsToken,
  };
}

/** Builds the HTTP API; `service/` decides where it listens. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: deps.logLevel ?? 'info', redact: [...API_KEY_REDACT_PATHS], hooks: { streamWrite: sanitiseLogLine } },
    genReqId: () => crypto.randomUUID(),
    frameworkErrors: answerFrameworkError,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);
  sanitiseAnswers(app);
  rejectUnstorableText(app);
  // Before auth, so requests it answers are timed (and traced) too.
  registerHttpTracing(app);
  registerHttpMetrics(app);
  // Before any route, so every route is behind it; routes declare who may call them in config.access.
  await registerAuth(app, { prisma: deps.prisma, rateLimit: deps.rateLimit ?? { max: 600, timeWindowMs: 60_000 }, publicRoutes: [...DEFAULT_PUBLIC_ROUTES, '/inbox'] });
  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'AI engineering loop',
        description: 'Submit coding tasks, follow their loops, decide escalations.',
        version: '0.1.0',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  healthRoutes(app, deps);
  loopRoutes(app, deps);
  timelineRoutes(app, deps);
  escalationRoutes(app, deps);
  inboxRoutes(app, deps);
  apiKeyRoutes(app, deps);
  metricsRoutes(app, deps);
  return app;
}
