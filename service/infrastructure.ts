import type { ServiceConfig } from '../config/service-config';
import { SupervisedDependency } from './dependency-supervisor';
import { startEmbeddedPostgres } from './embedded-postgres';
import { applyMigrations } from './migrate';
import { assertPortFree } from './port-check';
import { LOOP_SEARCH_ATTRIBUTES } from './search-attributes';
import { resolveTemporalCli, startTemporalDevServer } from './temporal-dev-server';

export interface Infrastructure {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  /** The embedded ones this process runs and restarts when they die; null: an external one (not ours to watch). */
  supervised: { postgres: SupervisedDependency | null; temporal: SupervisedDependency | null };
  /** Stops them (the dev server first), each bounded in time, whether they run, restart or are dead. */
  stop(): Promise<void>;
  /** SIGKILL to what runs (the service's shutdown deadline passed). */
  kill(): void;
}

/**
 * PostgreSQL and Temporal for the service: the configured ones, or — with DATABASE_URL / TEMPORAL_ADDRESS
 * unset — an embedded PostgreSQL and a Temporal dev server under the data directory, supervised
 * (service/dependency-supervisor.ts; `onChange` hears of every change of their state). Migrations are applied.
 */
export async function startInfrastructure(
  config: Readonly<ServiceConfig>,
  log: (line: string) => void,
  onChange: () => void = () => undefined,
): Promise<Infrastructure> {
  const started: SupervisedDependency[] = [];
  const stop = async () => {
    for (const dependency of [...started].reverse()) await dependency.stop();
  };
  try {
    let databaseUrl = config.databaseUrl;
    let postgres: SupervisedDependency | null = null;
    if (!databaseUrl) {
      log(`starting embedded PostgreSQL in ${config.dataDir}/postgres`);
      await assertPortFree(config.embeddedPostgresPort, 'embedded PostgreSQL', 'EMBEDDED_POSTGRES_PORT');
      // A restart reuses the data directory and port, so the URL the API and workers hold stays valid.
      const options = { dataDir: config.dataDir, port: config.embeddedPostgresPort };
      const supervised = new SupervisedDependency('PostgreSQL', () => startEmbeddedPostgres(options), log, onChange);
      databaseUrl = (await supervised.start()).databaseUrl;
      started.push((postgres = supervised));
    }
    if ((await applyMigrations(databaseUrl)) === 'current') log('database schema is current');

    let temporalAddress = config.temporal.address;
    let temporalUiUrl = config.temporal.uiUrl ?? null;
    let temporal: SupervisedDependency | null = null;
    if (!temporalAddress) {
      log(`starting the Temporal dev server in ${config.dataDir}/temporal`);
      await assertPortFree(config.temporal.port, 'Temporal dev server', 'TEMPORAL_PORT');
      await assertPortFree(config.temporal.uiPort, 'Temporal UI', 'TEMPORAL_UI_PORT');
      // A restart reuses the SQLite file and ports: the loops' state survives, the address stays valid.
      const options = {
        cliPath: resolveTemporalCli(config),
        dataDir: config.dataDir,
        port: config.temporal.port,
        uiPort: config.temporal.uiPort,
        namespace: config.temporal.namespace,
        searchAttributes: LOOP_SEARCH_ATTRIBUTES,
      };
      const supervised = new SupervisedDependency(
        'Temporal dev server',
        (signal) => startTemporalDevServer({ ...options, signal }),
        log,
        onChange,
      );
      const dev = await supervised.start();
      started.push((temporal = supervised));
      temporalAddress = dev.address;
      temporalUiUrl = dev.uiUrl;
    }
    return {
      databaseUrl,
      temporalAddress,
      temporalUiUrl,
      supervised: { postgres, temporal },
      stop,
      kill: () => started.forEach((dependency) => dependency.kill()),
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
