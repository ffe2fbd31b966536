import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { serviceSecrets } from '../activities/service-secrets';
import { registerServiceSecrets } from '../domain/sanitise';
import type { PrismaClient } from '../prisma/client';
import { probeSandbox } from '../activities/sandbox/probe';
import { createSandbox, type Sandbox } from '../activities/sandbox/sandbox';
import type { ServiceConfig } from './config';
import { activityMetricsInterceptor } from './telemetry/activity-metrics';
import { installTemporalSdkMetrics } from './telemetry/temporal-sdk-metrics';
import { activityTracingInterceptors, workflowTracingSinks } from './telemetry/tracing';
import { workflowCode } from './workflow-bundle';
import { startWorkspaceJanitor } from './workspace-janitor';

/** A worker for the loop task queue: the loop workflow plus every activity, bound to Postgres and config. */
export async function createLoopWorker(options: {
  config: Readonly<ServiceConfig>;
  prisma: PrismaClient;
  temporalAddress: string;
}): Promise<{ worker: Worker; connection: NativeConnection; sandbox: Sandbox }> {
  // A worker that cannot confine untrusted commands takes no loops (unless SANDBOX=none says otherwise).
  const sandbox = createSandbox(options.config);
  await probeSandbox(sandbox);
  // Every boundary the activities cross redacts these without being handed the configuration.
  registerServiceSecrets(serviceSecrets(options.config));
  // The SDK runtime takes its metrics exporter only before its first connection.
  const sdkMetrics = options.config.telemetry.temporalSdkMetricsAddress;
  if (sdkMetrics) installTemporalSdkMetrics(sdkMetrics, (line) => console.log(`[worker] ${line}`));
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const code = workflowCode((line) => console.log(`[worker] ${line}`));
  const worker = await Worker.create({
    connection,
    namespace: options.config.temporal.namespace,
    taskQueue: options.config.temporal.taskQueue,
    workflowBundle: code.workflowBundle,
    workflowsPath: code.workflowsPath,
    bundlerOptions: code.bundlerOptions,
    interceptors: { workflowModules: code.workflowModules, activity: [activityMetricsInterceptor, ...activityTracingInterceptors()] },
    sinks: workflowTracingSinks(),
    activities: createActivities({ prisma: options.prisma, config: options.config, sandbox }),
    // Agents and gates are heavy on a small machine; more loops scale out with more workers.
    maxConcurrentActivityTaskExecutions: 4,
    maxCachedWorkflows: options.config.temporal.maxCachedWorkflows,
    // Heartbeats carry cancellation back to running commands: send them often enough that a cancelled
    // loop stops its gate or agent within seconds, not at the SDK's default of up to 30 s.
    defaultHeartbeatThrottleInterval: '2s',
    maxHeartbeatThrottleInterval: '2s',
  });
  startWorkspaceJanitor(options.prisma, options.config, (line) => console.log(`[worker] ${line}`));
  return { worker, connection, sandbox };
}
