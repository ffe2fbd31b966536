import { activityDatabaseWait } from '../activities/database-wait';
import { stopLauncher } from '../activities/process/launcher';
import { limitsStatus } from '../activities/sandbox/limits';
import { createPrismaClient } from '../prisma/client';
import { loadConfig } from '../config/service-config';
import { required } from './require-env';
import { startMetricsServer } from '../telemetry/metrics-server';
import { enableProcessMetrics, processRegistry } from '../telemetry/registry';
import { startConfiguredTracing } from '../telemetry/tracing';
import { stopWhenOrphaned } from './parent-watch';
import type { Worker } from '@temporalio/worker';
import { createLoopWorker } from './worker';
import { heapLimitMb, workflowCacheSize } from './worker-memory';

// Worker process (docker-compose `loop-worker` and `worker`, by WORKER_ROLE; the tests' killable worker). Scale out by running more.
// The Temporal SDK drains the worker on SIGINT/SIGTERM by itself (its runtime's signal handlers), within
// SHUTDOWN_GRACE_SECONDS (service/worker.ts); this process says so and what it waits for.
async function main(): Promise<void> {
  const config = loadConfig();
  enableProcessMetrics('worker');
  // Before the worker, whose interceptors and sinks it decides.
  const tracing = startConfiguredTracing(config, 'engineering-loop-worker');
  const { workerMetrics, metricsToken } = config.telemetry;
  const metrics = workerMetrics
    ? await startMetricsServer({ ...workerMetrics, registries: [processRegistry], token: metricsToken })
    : null;
  if (metrics) console.log(`worker metrics on ${metrics.url}`);
  // A database outage makes activities wait for it (activities/database-wait.ts), not fail.
  const prisma = createPrismaClient(
    required(config.databaseUrl, 'DATABASE_URL'),
    activityDatabaseWait((line) => console.log(line)),
  );
  const { worker, connection, sandbox } = await createLoopWorker({
    config,
    prisma,
    temporalAddress: required(config.temporal.address, 'TEMPORAL_ADDRESS'),
  });
  const { role, activityConcurrency } = config.worker;
  const limits =
    sandbox.limits && limitsStatus(sandbox.limits.mechanism, sandbox.limits.values, sandbox.limits.workspaceCheckMs);
  const sandboxed = `(sandbox: ${sandbox.mode === 'none' ? 'NONE, commands run unsandboxed' : `bubblewrap; limits: ${limits?.mechanism}${limits?.where ? ` at ${limits.where}` : ''}`})`;
  const runs =
    role === 'workflows'
      ? 'loops and their record writes, no commands'
      : `${role === 'all' ? 'loops and ' : ''}up to ${activityConcurrency} activities at once ${sandboxed}`;
  // What bounds its memory (service/worker-memory.ts).
  const cache =
    role === 'activities' ? '' : `; workflow cache ${workflowCacheSize(config)} loops, heap limit ${heapLimitMb()} MB`;
  console.log(`worker ready on task queue ${config.temporal.taskQueue}: ${runs}${cache}`);
  announceDrain(
    worker,
    config.worker.shutdownGraceSeconds,
    role === 'workflows' ? 'record writes' : 'makers, gates, reviews',
  );
  // Started by `npm start`: stop (draining) if it was killed.
  stopWhenOrphaned(() => worker.shutdown());
  await worker.run();
  // The process launcher of the activities (activities/process/launcher.ts) ends with the worker.
  await stopLauncher();
  await connection.close();
  await prisma.$disconnect();
  // The last spans (the activities the worker drained) leave before the process does.
  await tracing?.shutdown();
  await metrics?.close();
}

/** One line at the first SIGINT/SIGTERM: what the drain waits for, and how long at most. */
function announceDrain(worker: Worker, graceSeconds: number, kinds: string): void {
  let announced = false;
  const announce = (signal: string) => {
    if (announced) return;
    announced = true;
    const running = worker.getStatus().numInFlightActivities;
    console.log(
      `${signal}: draining; ${running} running activit${running === 1 ? 'y' : 'ies'} (${kinds}) may finish ` +
        `for up to ${graceSeconds} s (SHUTDOWN_GRACE_SECONDS), then are cancelled and run again after the restart`,
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => announce(signal));
}

main().catch((err: unknown) => {
  console.error('worker failed:', err);
  process.exit(1);
});
