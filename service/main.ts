import fs from 'node:fs/promises';
import path from 'node:path';
import { serviceSecrets } from '../activities/service-secrets';
import { apiPolicy, buildApp } from '../api/app';
import { ensureBootstrapAdminKey } from '../api/auth/api-keys';
import { registerServiceSecrets } from '../domain/sanitise';
import { createPrismaClient } from '../prisma/client';
import { loadConfig } from './config';
import { startInfrastructure } from './infrastructure';
import { connectTemporalClient } from './temporal-client';
import { createLoopWorker } from './worker';

// `npm start`: the whole service in one process — infrastructure (embedded by default), worker and API.
async function main(): Promise<void> {
  const config = loadConfig();
  const log = (line: string) => console.log(`[engineering-loop] ${line}`);
  const infra = await startInfrastructure(config, log);
  // With the embedded PostgreSQL's generated password, which the configuration does not hold.
  registerServiceSecrets(serviceSecrets(config, infra.databaseUrl));
  const prisma = createPrismaClient(infra.databaseUrl);
  const temporal = await connectTemporalClient(infra.temporalAddress, config.temporal.namespace);
  const { worker, connection, sandbox } = await createLoopWorker({ config, prisma, temporalAddress: infra.temporalAddress });
  const app = await buildApp({ prisma, temporal, taskQueue: config.temporal.taskQueue, logLevel: config.logLevel, rateLimit: config.api.rateLimit, policy: apiPolicy(config) });
  const address = await app.listen({ host: config.api.host, port: config.api.port });

  log(`API          ${address}/v1/loops`);
  log(`OpenAPI docs ${address}/docs`);
  log(`Temporal UI  ${infra.temporalUiUrl ?? '(external Temporal; see its UI)'}`);
  log(`Temporal     ${infra.temporalAddress} (namespace ${config.temporal.namespace}, task queue ${config.temporal.taskQueue})`);
  log(`Inbox        ${address}/inbox`);
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

  // The Temporal SDK drains the worker on SIGINT/SIGTERM; run() returns once it has stopped.
  await worker.run();
  log('shutting down');
  await app.close();
  await connection.close();
  await temporal.connection.close();
  await prisma.$disconnect();
  await infra.stop();
}

main().catch((err: unknown) => {
  console.error('[engineering-loop] failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
