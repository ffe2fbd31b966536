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
import { serviceStatusMessage, type ServiceStatus } from '../api/service-status';
import { PARENT_PID_VARIABLE } from './parent-watch';
import { workerNodeArgs } from './worker-memory';

// `npm start`: the infrastructure (embedded by default) in this process, and three child processes — the
// API, a `workflows` worker (loops and their record writes) and an `activities` worker (makers, gates,
// reviews, git) — each with its own event loop, so spawning commands never delays an API answer or a
// loop's next step. A child that dies is restarted (supervisor.ts), and so are the embedded PostgreSQL
// and Temporal dev server (dependency-supervisor.ts); the API hears of their state for /readyz.
// Shutdown runs in reverse start order: the API takes no new loops, the workers drain (running
// activities finish within SHUTDOWN_GRACE_SECONDS), then the API stops, then the dev server and
// PostgreSQL — within the grace period plus SHUTDOWN_MARGIN_MS in all, never leaving a child behind.

const log = (line: string) => console.log(`[engineering-loop] ${line}`);
/** Started parts, in start order, each with how to stop it. */
const started: Array<{ name: string; stop: () => Promise<unknown> }> = [];
const children: SupervisedChild[] = [];
let infra: Infrastructure | null = null;
let api: SupervisedChild | null = null;
let workers: SupervisedChild[] = [];
let running = false;
let stopping: Promise<void> | null = null;
/** Set as the shutdown starts (before `stopping` holds its promise), for what the API is told. */
let stopRequested = false;
/** Past the drain, what stopping the rest may take before everything left is SIGKILLed. */
const SHUTDOWN_MARGIN_MS = 30_000;
/** After their grace period, how long the workers get to cancel what still runs (the SDK's own force time is 15 s). */
const WORKERS_STOP_AFTER_GRACE_MS = 20_000;
const API_STOP_MS = 5_000;
/** SHUTDOWN_GRACE_SECONDS as configured; the default until the configuration is read. */
let graceSeconds = 300;

async function main(): Promise<void> {
  const config = loadConfig();
  graceSeconds = config.worker.shutdownGraceSeconds;
  const dependencies = await startInfrastructure(config, log, dependenciesChanged);
  infra = dependencies;
  started.push({ name: 'PostgreSQL and Temporal', stop: () => dependencies.stop() });
  // With the embedded PostgreSQL's generated password, which the configuration does not hold: the
  // children's output is redacted of it here too (supervisor.ts).
  registerServiceSecrets(serviceSecrets(config, dependencies.databaseUrl));
  // Fixed before the API child starts, so a restarted API comes back on the same port; and checked, since
  // an API an earlier run left behind would answer the readiness probe in place of ours.
  const apiPort = config.api.port || (await freePort(config.api.host));
  if (config.api.port) await assertPortFree(apiPort, 'API', 'API_PORT');
  if (stopping) return;

  const apiChild = supervise(
    'api',
    'api-main.js',
    childEnv(dependencies, {
      API_PORT: String(apiPort),
      WORKER_METRICS_PORT: undefined,
      TEMPORAL_SDK_METRICS_ADDRESS: undefined,
    }),
    {
      probe: () => answers(`${apiUrl(config.api.host, apiPort)}/livez`),
    },
    true,
  );
  api = apiChild;
  publishStatus();
  started.push({ name: 'API', stop: () => apiChild.stop(API_STOP_MS) });
  // Only one process can bind each metrics port: the workflows worker takes WORKER_METRICS_PORT and the
  // Temporal SDK exporter's address, the activities worker WORKER_METRICS_PORT + 1.
  const metricsPort = config.telemetry.workerMetrics?.port;
  const workflowsEnv = childEnv(dependencies, { WORKER_ROLE: 'workflows' });
  const activitiesEnv = childEnv(dependencies, {
    WORKER_ROLE: 'activities',
    WORKER_METRICS_PORT: metricsPort ? String(metricsPort + 1) : undefined,
    TEMPORAL_SDK_METRICS_ADDRESS: undefined,
  });
  workers = [
    supervise(
      'workflows',
      'worker-main.js',
      workflowsEnv,
      { line: 'worker ready' },
      false,
      workerNodeArgs('workflows', config),
    ),
    supervise('activities', 'worker-main.js', activitiesEnv, { line: 'worker ready' }),
  ];
  const workersStopMs = graceSeconds * 1000 + WORKERS_STOP_AFTER_GRACE_MS;
  started.push({ name: 'workers', stop: () => Promise.all(workers.map((w) => w.stop(workersStopMs))) });
  await Promise.all([apiChild, ...workers].map((child) => child.start()));

  const bootstrap = await bootstrapAdminKey(config, dependencies.databaseUrl);
  printBanner(config, dependencies, apiUrl(config.api.host, apiPort));
  if (bootstrap) log(`Admin API key (created now, shown once; also in ${bootstrap.file}): ${bootstrap.key}`);
  running = true;
}

function supervise(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  ready: ChildSpec['ready'],
  ipc = false,
  nodeArgs: string[] = [],
): SupervisedChild {
  const child = new SupervisedChild({ name, script: path.join(__dirname, script), nodeArgs, env, ready, ipc }, log);
  children.push(child);
  return child;
}

/** What the API shows in /readyz and acts on (no new loops while stopping). */
function serviceStatus(): ServiceStatus {
  return {
    stopping: stopRequested,
    dependencies: {
      postgres: infra?.supervised.postgres?.state() ?? null,
      temporal: infra?.supervised.temporal?.state() ?? null,
    },
  };
}

function publishStatus(): void {
  api?.send(serviceStatusMessage(serviceStatus()));
}

/**
 * A dependency changed state. Once all are up, a child that kept failing while one was down (a worker
 * that cannot connect exits, and waits longer before each next start) starts now, not after its backoff.
 */
function dependenciesChanged(): void {
  publishStatus();
  const states = Object.values(serviceStatus().dependencies).filter((state) => state !== null);
  if (states.every((state) => state.state === 'up')) for (const child of children) child.restartNow();
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

/**
 * Stops every started part in reverse order: the API first refuses new loops, the workers drain within the
 * grace period, then the API, the dev server and PostgreSQL stop. Past the grace period plus
 * SHUTDOWN_MARGIN_MS whatever is left is SIGKILLed and the exit code is 1.
 */
function shutDown(code: number): Promise<void> {
  if (!stopping) stopRequested = true;
  stopping ??= (async () => {
    const limitMs = graceSeconds * 1000 + SHUTDOWN_MARGIN_MS;
    log(
      `shutting down: no new loops; running activities may finish for up to ${graceSeconds} s (SHUTDOWN_GRACE_SECONDS); ` +
        `everything stops within ${limitMs / 1000} s (a second signal stops the workers at once)`,
    );
    setTimeout(() => {
      log(`shutdown took longer than ${limitMs / 1000}s; killing what is left`);
      for (const child of children) child.kill();
      infra?.kill();
      process.exit(1);
    }, limitMs).unref();
    // At once: a Ctrl-C reaches the children too, and their exits must not be taken for crashes.
    for (const child of children) child.stopRestarting();
    publishStatus();
    for (const part of started.reverse()) {
      await part
        .stop()
        .catch((err: unknown) =>
          log(`stopping the ${part.name} failed: ${err instanceof Error ? err.message : String(err)}`),
        );
    }
    log('stopped');
    process.exit(code);
  })();
  return stopping;
}

/** A second signal while draining: the workers are killed, their activities run again after the restart. */
function stopWorkersNow(): void {
  log(
    'second signal: not waiting for running activities; killing the workers (what they ran runs again after the restart)',
  );
  for (const worker of workers) worker.kill();
}

// Once everything runs, a signal is the ordinary way to stop (exit 0); during the start it interrupts it.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping && running) stopWorkersNow();
    else void shutDown(running ? 0 : signal === 'SIGINT' ? 130 : 143);
  });
}

main().catch((err: unknown) => {
  if (stopping) return; // interrupted by a signal: the children's exits are no failure of their own
  console.error('[engineering-loop] failed to start:', err instanceof Error ? err.message : err);
  void shutDown(1);
});
