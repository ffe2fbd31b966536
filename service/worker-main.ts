import { createPrismaClient } from '../prisma/client';
import { loadConfig } from './config';
import { required } from './require-env';
import { createLoopWorker } from './worker';

// Worker process (docker-compose `worker`, and the tests' killable worker). Scale out by running more.
// The Temporal worker shuts down gracefully on SIGINT/SIGTERM by itself.
async function main(): Promise<void> {
  const config = loadConfig();
  const prisma = createPrismaClient(required(config.databaseUrl, 'DATABASE_URL'));
  const { worker, connection } = await createLoopWorker({
    config,
    prisma,
    temporalAddress: required(config.temporal.address, 'TEMPORAL_ADDRESS'),
  });
  console.log(`worker ready on task queue ${config.temporal.taskQueue}`);
  await worker.run();
  await connection.close();
  await prisma.$disconnect();
}

main().catch((err: unknown) => {
  console.error('worker failed:', err);
  process.exit(1);
});
