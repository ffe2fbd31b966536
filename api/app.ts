import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { Client } from '@temporalio/client';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { PrismaClient } from '../prisma/client';
import { registerErrorHandler } from './errors';
import { healthRoutes } from './routes/health';
import { escalationRoutes } from './routes/escalations';
import { inboxRoutes } from './routes/inbox';
import { loopRoutes } from './routes/loops';

export interface AppDeps {
  prisma: PrismaClient;
  temporal: Client;
  taskQueue: string;
  logLevel?: string;
}

/** Builds the HTTP API; `service/` decides where it listens. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: deps.logLevel ?? 'info', redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] },
    genReqId: () => crypto.randomUUID(),
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);
  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'AI engineering loop',
        description: 'Submit coding tasks, follow their loops, decide escalations.',
        version: '0.1.0',
      },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  healthRoutes(app, deps);
  loopRoutes(app, deps);
  escalationRoutes(app, deps);
  inboxRoutes(app, deps);
  return app;
}
