import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { serviceSecrets } from '../config/service-secrets';
import { registerServiceSecrets } from '../domain/sanitise';
import type { PrismaClient } from '../store/db';
import { probeSandbox } from '../activities/sandbox/probe';
import { createSandbox } from '../activities/sandbox/sandbox';
import type { Sandbox } from '../activities/sandbox/types';
import type { ServiceConfig } from '../config/service-config';
import { activityMetricsInterceptor } from '../telemetry/activity-metrics';
import { installTemporalSdkMetrics } from '../telemetry/temporal-sdk-metrics';
import { activityTracingInterceptors, workflowTracingSinks } from '../telemetry/tracing';
import { workflowCode } from './workflow-bundle';
import { workflowCacheSize } from './worker-memory';
import { startWorkspaceJanitor } from './workspace-janitor';

/** After the grace period, how long cancelled activities get to stop and record themselves. */
const SHUTDOWN_FORCE_AFTER_GRACE_SECONDS = 15;

/**
 * A worker for the loop task queue, bound to Postgres and config. Its role (WORKER_ROLE) decides what it
 * polls: `workflows` runs loops and their record writes (local activities) and no heavy activity, so a
 * busy maker or gate never delays a loop's bookkeeping; `activities` runs makers, gates, reviews and git
 * steps in a process without a workflow cache, whose small memory keeps spawning processes cheap;
 * `all` does both in one process.
 */
export async function createLoopWorker(options: {
  config: Readonly<ServiceConfig>;
  prisma: PrismaClient;
  temporalAddress: string;
}): Promise<{ worker: Worker; connection: NativeConnection; sandbox: Sandbox }> {
  const { role, activityConcurrency, shutdownGraceSeconds } = options.config.worker;
  // A worker that cannot confine untrusted commands takes none (unless SANDBOX=none says otherwise); one
  // that runs only loops and their record writes runs no command.
  const sandbox = createSandbox(options.config);
  if (role !== 'workflows') await probeSandbox(sandbox);
  // Every boundary the activities cross redacts these without being handed the configuration.
  registerServiceSecrets(serviceSecrets(options.config));
  // The SDK runtime takes its metrics exporter only before its first connection.
  const sdkMetrics = options.config.telemetry.temporalSdkMetricsAddress;
  if (sdkMetrics) installTemporalSdkMetrics(sdkMetrics, (line) => console.log(`[worker] ${line}`));
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const code = role === 'activities' ? null : workflowCode((line) => console.log(`[worker] ${line}`));
  const worker = await Worker.create({
    connection,
    namespace: options.config.temporal.namespace,
    taskQueue: options.config.temporal.taskQueue,
    ...(code && {
      workflowBundle: code.workflowBundle,
      workflowsPath: code.workflowsPath,
      bundlerOptions: code.bundlerOptions,
      maxCachedWorkflows: workflowCacheSize(options.config),
      sinks: workflowTracingSinks(),
    }),
    interceptors: {
      workflowModules: code?.workflowModules ?? [],
      activity: [activityMetricsInterceptor, ...activityTracingInterceptors()],
    },
    // Record writes are local activities: a `workflows` worker needs every activity registered to run them.
    activities: createActivities({ prisma: options.prisma, config: options.config, sandbox }),
    enableNonLocalActivities: role !== 'workflows',
    maxConcurrentActivityTaskExecutions: activityConcurrency,
    // Heartbeats carry cancellation back to running commands: send them often enough that a cancelled
    // loop stops its gate or agent within seconds, not at the SDK's default of up to 30 s.
    defaultHeartbeatThrottleInterval: '2s',
    maxHeartbeatThrottleInterval: '2s',
    // Drain (SIGTERM, or worker.shutdown()): no new tasks; running makers, gates and reviews finish within
    // the grace period, then are cancelled (a maker records its run as INTERRUPTED) and run again after the
    // restart. Past the force time the worker gives up on activities that ignore their cancellation.
    shutdownGraceTime: shutdownGraceSeconds * 1000,
    shutdownForceTime: (shutdownGraceSeconds + SHUTDOWN_FORCE_AFTER_GRACE_SECONDS) * 1000,
  });
  // Workspaces live where the heavy activities run.
  if (role !== 'workflows')
    startWorkspaceJanitor(options.prisma, options.config, (line) => console.log(`[worker] ${line}`));
  return { worker, connection, sandbox };
}
