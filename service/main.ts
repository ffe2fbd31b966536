import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { serviceSecrets } from '../config/service-secrets';
import { ensureBootstrapAdminKey } from '../api/auth/api-keys';
import { registerServiceSecrets } from '../domain/sanitise';
import { createPrismaClient } from '../prisma/client';
import { loadConfig, type ServiceConfig } from '../config/service-config';
import { startInfrastructure, type Infrastructure } from './infrastructure';
import { assertPortFree } from './port-check';
import { SupervisedChild, type ChildSpec } from './supervisor';
import { PARENT_PID_VARIABLE } from './parent-watch';

// `npm start`: the infrastructure (embedded by default) in this process, and three child processes — the
// API, a `workflows` worker (loops and their record writes) and an `activities` worker (makers, gates,
// reviews, git) — each with its own event loop, so spawning commands never delays an API answer or a
// loop's next step. A child that dies is restarted (supervisor.ts). Shutdown runs in reverse start
// order: the workers drain first (the Temporal SDK does that on SIGTERM), then the API stops, then the
// dev server and PostgreSQL — never leaving a child behind.

const log = (line: string) => console.log(`[engineering-loop] ${line}`);
/** Started parts, in start order, each with how to stop it. */
const started: Array<{ name: string; stop: () => Promise<unknown> }> = [];
const children: SupervisedChild[] = [];
let running = false;
let stopping: Promise<void> | null = null;
const SHUTDOWN_LIMIT_MS = 60_000;
/** Within SHUTDOWN_LIMIT_MS: the workers' drain, then the API's close, before they are killed; the rest is the infrastructure's. */
const WORKERS_STOP_MS = 30_000;
const API_STOP_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const infra = await startInfrastructure(config, log);
  started.push({ name: 'PostgreSQL and Temporal', stop: () => infra.stop() });
  // With the embedded PostgreSQL's generated password, which the configuration does not hold: the
  // children's output is redacted of it here too (supervisor.ts).
  registerServiceSecrets(serviceSecrets(config, infra.databaseUrl));
  // Fixed before the API child starts, so a restarted API comes back on the same port; and checked, since
  // an API an earlier run left behind would answer the readiness probe in place of ours.
  const apiPort = config.api.port || (await freePort(config.api.host));
  if (config.api.port) await assertPortFree(apiPort, 'API', 'API_PORT');
  if (stopping) return;

  const api = supervise(
    'api',
    'api-main.js',
    childEnv(infra, {
      API_PORT: String(apiPort),
      WORKER_METRICS_PORT: undefined,
      TEMPORAL_SDK_METRICS_ADDRESS: undefined,
    }),
    {
      probe: () => answers(`${apiUrl(config.api.host, apiPort)}/livez`),
    },
  );
  started.push({ name: 'API', stop: () => api.stop(API_STOP_MS) });
  // Only one process can bind each metrics port: the workflows worker takes WORKER_METRICS_PORT and the
  // Temporal SDK exporter's address, the activities worker WORKER_METRICS_PORT + 1.
  const metricsPort = config.telemetry.workerMetrics?.port;
  const workflowsEnv = childEnv(infra, { WORKER_ROLE: 'workflows' });
  const activitiesEnv = childEnv(infra, {
    WORKER_ROLE: 'activities',
    WORKER_METRICS_PORT: metricsPort ? String(metricsPort + 1) : undefined,
    TEMPORAL_SDK_METRICS_ADDRESS: undefined,
  });
  const workers = [
    supervise('workflows', 'worker-main.js', workflowsEnv, { line: 'worker ready' }),
    supervise('activities', 'worker-main.js', activitiesEnv, { line: 'worker ready' }),
  ];
  started.push({ name: 'workers', stop: () => Promise.all(workers.map((w) => w.stop(WORKERS_STOP_MS))) });
  await Promise.all([api, ...workers].map((child) => child.start()));

  const bootstrap = await bootstrapAdminKey(config, infra.databaseUrl);
  printBanner(config, infra, apiUrl(config.api.host, apiPort));
  if (bootstrap) log(`Admin API key (created now, shown once; also in ${bootstrap.file}): ${bootstrap.key}`);
  running = true;
}

function supervise(name: string, script: string, env: NodeJS.ProcessEnv, ready: ChildSpec['ready']): SupervisedChild {
  const child = new SupervisedChild({ name, script: path.join(__dirname, script), env, ready }, log);
  children.push(child);
  return child;
}

/** Our environment for a child, with the infrastructure this process started; undefined removes a variable. */
function childEnv(infra: Infrastructure, overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: infra.databaseUrl,
    TEMPORAL_ADDRESS: infra.temporalAddress,
    [PARENT_PID_VARIABLE]: String(process.pid),
    ...overrides,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return env;
}

/** Where this machine reaches the API: a wildcard listen address is reached on loopback. */
function apiUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

async function answers(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
  return response.ok;
}

/** API_PORT=0: a port the OS picks now, kept for the API's every (re)start. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The first admin key when there is no key yet; kept (mode 0600) beside the embedded data so a local user can find it again. */
async function bootstrapAdminKey(
  config: Readonly<ServiceConfig>,
  databaseUrl: string,
): Promise<{ key: string; file: string } | null> {
  // This process needs the database only for this, so its client does not outlive it.
  const prisma = createPrismaClient(databaseUrl);
  try {
    const bootstrap = await ensureBootstrapAdminKey(prisma);
    if (!bootstrap) return null;
    const file = path.join(config.dataDir, 'bootstrap-admin-key');
    await fs.writeFile(file, `${bootstrap.key}\n`, { mode: 0o600 });
    return { key: bootstrap.key, file };
  } finally {
    await prisma.$disconnect();
  }
}

function printBanner(config: Readonly<ServiceConfig>, infra: Infrastructure, address: string): void {
  const { telemetry, sandbox } = config;
  const workerMetrics = telemetry.workerMetrics
    ? `; workers http://${telemetry.workerMetrics.host}:${telemetry.workerMetrics.port}/metrics and :${telemetry.workerMetrics.port + 1}`
    : '';
  log(`API          ${address}/v1/loops`);
  log(`OpenAPI docs ${address}/docs`);
  log(`Temporal UI  ${infra.temporalUiUrl ?? '(external Temporal; see its UI)'}`);
  log(
    `Temporal     ${infra.temporalAddress} (namespace ${config.temporal.namespace}, task queue ${config.temporal.taskQueue})`,
  );
  log(`Inbox        ${address}/inbox`);
  log(
    `Metrics      ${address}/metrics${telemetry.metricsToken ? ' (METRICS_TOKEN)' : ''}${workerMetrics}${telemetry.temporalSdkMetricsAddress ? `; Temporal SDK http://${telemetry.temporalSdkMetricsAddress}/metrics` : ''}`,
  );
  if (telemetry.tracesUrl) {
    log(
      `Traces       ${telemetry.tracesUrl} (${telemetry.serviceName ? `service ${telemetry.serviceName}` : 'services engineering-loop-api, engineering-loop-worker'})`,
    );
  }
  // As the activities worker decides it (activities/sandbox/sandbox.ts): it runs with this process's uid.
  log(
    sandbox.mode === 'bwrap'
      ? `Sandbox      bubblewrap${process.getuid?.() === 0 ? ` (untrusted commands run as uid ${sandbox.uid})` : ''}`
      : 'Sandbox      NONE (SANDBOX=none): makers, agents and gates run unsandboxed; every report says so',
  );
}

/** Stops every started part in reverse order, within SHUTDOWN_LIMIT_MS, then exits. */
function shutDown(code: number): Promise<void> {
  stopping ??= (async () => {
    log('shutting down');
    setTimeout(() => {
      log(`shutdown took longer than ${SHUTDOWN_LIMIT_MS / 1000}s; exiting`);
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    // At once: a Ctrl-C reaches the children too, and their exits must not be taken for crashes.
    for (const child of children) child.stopRestarting();
    for (const part of started.reverse()) {
      await part
        .stop()
        .catch((err: unknown) =>
          log(`stopping the ${part.name} failed: ${err instanceof Error ? err.message : String(err)}`),
        );
    }
    process.exit(code);
  })();
  return stopping;
}

// Once everything runs, a signal is the ordinary way to stop (exit 0); during the start it interrupts it.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void shutDown(running ? 0 : signal === 'SIGINT' ? 130 : 143));
}

main().catch((err: unknown) => {
  if (stopping) return; // interrupted by a signal: the children's exits are no failure of their own
  console.error('[engineering-loop] failed to start:', err instanceof Error ? err.message : err);
  void shutDown(1);
});
