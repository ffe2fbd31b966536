import { serviceSecrets } from '../config/service-secrets';
import { buildApp } from '../api/app';
import { apiPolicy } from '../api/deps';
import { sandboxLimitsStatus } from '../activities/sandbox/sandbox';
import { registerServiceSecrets } from '../domain/sanitise';
import { createPrismaClient } from '../prisma/client';
import { loadConfig } from '../config/service-config';
import { required } from './require-env';
import { enableProcessMetrics } from '../telemetry/registry';
import { startConfiguredTracing } from '../telemetry/tracing';
import { stopWhenOrphaned } from './parent-watch';
import { connectTemporalClient } from './temporal-client';

// Production API process (docker-compose `api`): real PostgreSQL and Temporal, no embedded parts.
async function main(): Promise<void> {
  const config = loadConfig();
  // Answers and log lines are sanitised of these (api/sanitise-output.ts).
  registerServiceSecrets(serviceSecrets(config));
  enableProcessMetrics('api');
  // Before the Temporal client, whose interceptors it decides.
  const tracing = startConfiguredTracing(config, 'engineering-loop-api');
  const prisma = createPrismaClient(required(config.databaseUrl, 'DATABASE_URL'));
  const temporal = await connectTemporalClient(
    required(config.temporal.address, 'TEMPORAL_ADDRESS'),
    config.temporal.namespace,
  );
  const app = await buildApp({
    prisma,
    temporal,
    taskQueue: config.temporal.taskQueue,
    logLevel: config.logLevel,
    rateLimit: config.api.rateLimit,
    // /readyz shows the limits per sandbox as a worker on this host detects them.
    policy: apiPolicy(config, sandboxLimitsStatus(config)),
  });
  await app.listen({ host: config.api.host, port: config.api.port });
  const shutdown = async () => {
    await app.close();
    await temporal.connection.close();
    await prisma.$disconnect();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
  // Started by `npm start`: stop if it was killed.
  stopWhenOrphaned(() => void shutdown());
}

main().catch((err: unknown) => {
  console.error('api failed to start:', err);
  process.exit(1);
});
