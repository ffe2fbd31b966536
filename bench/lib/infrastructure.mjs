// Embedded PostgreSQL and the Temporal dev server, in a temp dir on free ports, as `npm start` runs them.
import fs from 'node:fs';
import path from 'node:path';
import { importDist } from './dist.mjs';
import { allProcesses } from './proc.mjs';
import { freePort } from './util.mjs';

/** Starts both, registers their stop with `cleanup`, and says which pids to measure. */
export async function startInfrastructure(tempDir, cleanup) {
  const { startEmbeddedPostgres } = await importDist('service/embedded-postgres.js');
  const { startTemporalDevServer, resolveTemporalCli } = await importDist('service/temporal-dev-server.js');
  const { applyMigrations } = await importDist('service/migrate.js');

  const [pgPort, temporalPort, uiPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const postgres = await startEmbeddedPostgres({ dataDir: tempDir, port: pgPort });
  cleanup.add('PostgreSQL', () => postgres.stop());
  const postmasterPid = Number(
    fs.readFileSync(path.join(tempDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  await applyMigrations(postgres.databaseUrl);

  const temporal = await startTemporalDevServer({
    cliPath: resolveTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } }),
    dataDir: tempDir,
    port: temporalPort,
    uiPort,
    namespace: 'default',
  });
  cleanup.add('Temporal dev server', () => temporal.stop());
  // The CLI process serving this temp dir's SQLite file (not any other dev server on the machine).
  const sqlite = path.join(tempDir, 'temporal', 'temporal.sqlite');
  const temporalPid = allProcesses().find((p) => p.cmdline.includes(sqlite) && p.cmdline.includes('start-dev'))?.pid;
  if (!temporalPid) throw new Error('cannot find the Temporal dev server process');
  return { databaseUrl: postgres.databaseUrl, temporalAddress: temporal.address, postmasterPid, temporalPid };
}
