import { serviceSecrets } from '../config/service-secrets';
import { buildApp } from '../api/app';
import { apiPolicy } from '../api/deps';
import { listenForServiceStatus } from '../api/service-status';
import { sandboxLimitsStatus } from '../activities/sandbox/sandbox';
import { registerServiceSecrets } from '../domain/sanitise';
import { createPrismaClient } from '../prisma/client';
import { loadConfig } from '../config/service-config';
import { required } from './require-env';
import { enableProcessMetrics } from '../telemetry/registry';
import { startConfiguredTracing } from '../telemetry/tracing';
import { PARENT_PID_VARIABLE, stopWhenOrphaned } from './parent-watch';
import { connectTemporalClient } from './temporal-client';
import { listenForLoopWrites } from '../store/loop-writes';

// Production API process (docker-compose `api`): real PostgreSQL and Temporal, no embedded parts.
async function main(): Promise<void> {
  // Under `npm start`, what main says of its PostgreSQL and dev server and of a shutdown under way: heard
  // from before the first await, so its first message (sent as this process starts) is not missed.
  const serviceStatus = listenForServiceStatus();
  const config = loadConfig();
  // Answers and log lines are sanitised of these (api/sanitise-output.ts).
  registerServiceSecrets(serviceSecrets(config));
  enableProcessMetrics('api');
  // Before the Temporal client, whose interceptors it decides.
  const tracing = startConfiguredTracing(config, 'engineering-loop-api');
  const databaseUrl = required(config.databaseUrl, 'DATABASE_URL');
  const prisma = createPrismaClient(databaseUrl);
  const loopWrites = listenForLoopWrites(databaseUrl, (line) => console.log(`[api] ${line}`));
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
    serviceStatus,
    loopWrites,
  });
  await app.listen({ host: config.api.host, port: config.api.port });
  const shutdown = async () => {
    await app.close();
    await loopWrites.close();
    await temporal.connection.close();
    await prisma.$disconnect();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  if (process.env[PARENT_PID_VARIABLE]) {
    // Started by `npm start`, which decides when this stops (after the workers drained: GETs keep being
    // answered meanwhile), also when a terminal's Ctrl-C reaches every process; and stop if it was killed.
    process.on('SIGINT', () => undefined);
    stopWhenOrphaned(() => void shutdown());
  } else {
    process.once('SIGINT', () => void shutdown());
  }
}

main().catch((err: unknown) => {
  console.error('api failed to start:', err);
  process.exit(1);
});
