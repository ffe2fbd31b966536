import fs from 'node:fs/promises';
import path from 'node:path';
import { serviceSecrets } from '../activities/service-secrets';
import { apiPolicy, buildApp } from '../api/app';
import { ensureBootstrapAdminKey } from '../api/auth/api-keys';
import { registerServiceSecrets } from '../domain/sanitise';
import { createPrismaClient } from '../prisma/client';
import { loadConfig } from './config';
import { startInfrastructure } from './infrastructure';
import { enableProcessMetrics } from './telemetry/registry';
import { startConfiguredTracing } from './telemetry/tracing';
import { connectTemporalClient } from './temporal-client';
import { createLoopWorker } from './worker';

// `npm start`: the whole service in one process — infrastructure (embedded by default), worker and API.
// Shutdown runs in reverse start order: the worker drains first (the Temporal SDK does that on SIGINT or
// SIGTERM), then the API stops, then the dev server and PostgreSQL — never leaving a child behind.

const log = (line: string) => console.log(`[engineering-loop] ${line}`);
/** Started parts, in start order, each with how to stop it. */
const started: Array<{ name: string; stop: () => Promise<unknown> }> = [];
let workerRunning = false;
let stopping: Promise<void> | null = null;
const SHUTDOWN_LIMIT_MS = 60_000;

async function main(): Promise<void> {
  const config = loadConfig();
  // One registry for the worker and the API: GET /metrics shows both. The worker's Temporal SDK metrics
  // (TEMPORAL_SDK_METRICS_ADDRESS) are set up by createLoopWorker, before its connection.
  enableProcessMetrics('all-in-one');
  // Before the Temporal client and the worker, whose interceptors it decides; stopped last (flushes).
  const tracing = startConfiguredTracing(config, 'engineering-loop');
  if (tracing) started.push({ name: 'tracing', stop: () => tracing.shutdown() });
  const infra = await startInfrastructure(config, log);
  started.push({ name: 'PostgreSQL and Temporal', stop: () => infra.stop() });
  // With the embedded PostgreSQL's generated password, which the configuration does not hold.
  registerServiceSecrets(serviceSecrets(config, infra.databaseUrl));
  const prisma = createPrismaClient(infra.databaseUrl);
  started.push({ name: 'database client', stop: () => prisma.$disconnect() });
  const temporal = await connectTemporalClient(infra.temporalAddress, config.temporal.namespace);
  started.push({ name: 'Temporal client', stop: () => temporal.connection.close() });
  const { worker, connection, sandbox } = await createLoopWorker({ config, prisma, temporalAddress: infra.temporalAddress });
  started.push({ name: 'worker connection', stop: () => connection.close() });
  // Running from here on, so the SDK owns SIGINT/SIGTERM: it drains the worker, then shutDown() goes on.
  const running = worker.run();
  workerRunning = true;
  started.push({
    name: 'worker',
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  });
  const app = await buildApp({ prisma, temporal, taskQueue: config.temporal.taskQueue, logLevel: config.logLevel, rateLimit: config.api.rateLimit, policy: apiPolicy(config) });
  started.push({ name: 'API', stop: () => app.close() });
  const address = await app.listen({ host: config.api.host, port: config.api.port });
  log(`API          ${address}/v1/loops`);
  log(`OpenAPI docs ${address}/docs`);
  log(`Temporal UI  ${infra.temporalUiUrl ?? '(external Temporal; see its UI)'}`);
  log(`Temporal     ${infra.temporalAddress} (namespace ${config.temporal.namespace}, task queue ${config.temporal.taskQueue})`);
  log(`Inbox        ${address}/inbox`);
  log(`Metrics      ${address}/metrics${config.telemetry.metricsToken ? ' (METRICS_TOKEN)' : ''}${config.telemetry.temporalSdkMetricsAddress ? `; Temporal SDK http://${config.telemetry.temporalSdkMetricsAddress}/metrics` : ''}`);
  if (tracing) log(`Traces       ${config.telemetry.tracesUrl} (service ${tracing.serviceName})`);
  log(
    sandbox.mode === 'bwrap'
      ? `Sandbox      bubblewrap${sandbox.owner ? ` (untrusted commands run as uid ${sandbox.owner.uid})` : ''}`
      : 'Sandbox      NONE (SANDBOX=none): makers, agents and gates run unsandboxed; every report says so',
  );
  const bootstrap = await ensureBootstrapAdminKey(prisma);
  if (bootstrap) {
    // Shown once; kept (mode 0600) beside the embedded data so a local user can find it again.
    const keyFile = path.join(config.dataDir, 'bootstrap-admin-key');
    await fs.writeFile(keyFile, `${bootstrap.key}\n`, { mode: 0o600 });
    log(`Admin API key (created now, shown once; also in ${keyFile}): ${bootstrap.key}`);
  }

  await running;
  workerRunning = false;
  await shutDown(0);
}

/** Stops every started part in reverse order, within SHUTDOWN_LIMIT_MS, then exits. */
function shutDown(code: number): Promise<void> {
  stopping ??= (async () => {
    log('shutting down');
    setTimeout(() => {
      log(`shutdown took longer than ${SHUTDOWN_LIMIT_MS / 1000}s; exiting`);
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    for (const part of started.reverse()) {
      await part.stop().catch((err: unknown) => log(`stopping the ${part.name} failed: ${err instanceof Error ? err.message : String(err)}`));
    }
    process.exit(code);
  })();
  return stopping;
}

// While the worker runs, the SDK owns these signals; before it runs (or after), they stop what started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!workerRunning) void shutDown(signal === 'SIGINT' ? 130 : 143);
  });
}

main().catch((err: unknown) => {
  console.error('[engineering-loop] failed to start:', err instanceof Error ? err.message : err);
  void shutDown(1);
});
