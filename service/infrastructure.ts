import type { ServiceConfig } from '../config/service-config';
import { startEmbeddedPostgres } from './embedded-postgres';
import { applyMigrations } from './migrate';
import { assertPortFree } from './port-check';
import { LOOP_SEARCH_ATTRIBUTES } from './search-attributes';
import { resolveTemporalCli, startTemporalDevServer } from './temporal-dev-server';

export interface Infrastructure {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  stop(): Promise<void>;
}

/**
 * PostgreSQL and Temporal for the service: the configured ones, or — with DATABASE_URL / TEMPORAL_ADDRESS
 * unset — an embedded PostgreSQL and a Temporal dev server under the data directory. Migrations are applied.
 */
export async function startInfrastructure(
  config: Readonly<ServiceConfig>,
  log: (line: string) => void,
): Promise<Infrastructure> {
  const stops: Array<() => Promise<void>> = [];
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      log(`starting embedded PostgreSQL in ${config.dataDir}/postgres`);
      await assertPortFree(config.embeddedPostgresPort, 'embedded PostgreSQL', 'EMBEDDED_POSTGRES_PORT');
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort });
      stops.push(() => pg.stop());
      databaseUrl = pg.databaseUrl;
    }
    if ((await applyMigrations(databaseUrl)) === 'current') log('database schema is current');

    let temporalAddress = config.temporal.address;
    let temporalUiUrl = config.temporal.uiUrl ?? null;
    if (!temporalAddress) {
      log(`starting the Temporal dev server in ${config.dataDir}/temporal`);
      await assertPortFree(config.temporal.port, 'Temporal dev server', 'TEMPORAL_PORT');
      await assertPortFree(config.temporal.uiPort, 'Temporal UI', 'TEMPORAL_UI_PORT');
      const dev = await startTemporalDevServer({
        cliPath: resolveTemporalCli(config),
        dataDir: config.dataDir,
        port: config.temporal.port,
        uiPort: config.temporal.uiPort,
        namespace: config.temporal.namespace,
        searchAttributes: LOOP_SEARCH_ATTRIBUTES,
      });
      stops.push(() => dev.stop());
      temporalAddress = dev.address;
      temporalUiUrl = dev.uiUrl;
    }
    return {
      databaseUrl,
      temporalAddress,
      temporalUiUrl,
      stop: async () => {
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw err;
  }
}
