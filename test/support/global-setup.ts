import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../service/embedded-postgres';
import { resolveTemporalCli, startTemporalDevServer, type TemporalDevServer } from '../../service/temporal-dev-server';
import { createTemplateDatabase } from './template-database';
import { prebuildGoSeed } from './go-seed';
import { freePort } from './free-port';

// One embedded PostgreSQL and one Temporal dev server for the whole jest run, on free ports in a temp
// dir. Tests find them through env vars: jest starts test workers (or the in-band runtime) after
// globalSetup, and they inherit process.env from this process.
export interface TestPlatform {
  tempDir: string;
  postgres?: EmbeddedPostgres;
  temporal?: TemporalDevServer;
}

export const TEST_TEMPORAL_NAMESPACE = 'default';

export default async function globalSetup(): Promise<void> {
  const tempDir = await fs.mkdtemp(path.join(os.tmpdir(), 'engineering-loop-test-'));
  const platform: TestPlatform = { tempDir };
  // globalTeardown runs in this same context and reads it back from here.
  (globalThis as { __TEST_PLATFORM__?: TestPlatform }).__TEST_PLATFORM__ = platform;
  try {
    const [pgPort, temporalPort, uiPort] = await Promise.all([freePort(), freePort(), freePort()]);
    // PostgreSQL (then the test databases' template) and the Temporal dev server start side by side.
    const database = startEmbeddedPostgres({ dataDir: tempDir, port: pgPort }).then(async (postgres) => {
      platform.postgres = postgres;
      process.env.TEST_DATABASE_ADMIN_URL = postgres.adminUrl;
      await createTemplateDatabase();
    });
    const temporal = startTemporalDevServer({
      cliPath: resolveTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } }),
      dataDir: tempDir,
      port: temporalPort,
      uiPort,
      namespace: TEST_TEMPORAL_NAMESPACE,
    }).then((server) => {
      platform.temporal = server;
    });
    // Where a harness finds Go's std compiled, and leaves it for the files after it (go-seed.ts). A run
    // with several Go files (`npm test`, `npm run test:e2e`: TEST_GO_SEED_PREBUILD=1) builds it here, once,
    // beside the platform; otherwise the first file that runs a Go loop builds it, as the service would.
    const goSeedDir = path.join(tempDir, 'go-std-cache');
    process.env.TEST_GO_SEED_DIR = goSeedDir;
    const goSeed =
      process.env.TEST_GO_SEED_PREBUILD === '1'
        ? prebuildGoSeed(tempDir, goSeedDir).catch((error: unknown) => console.error('building the Go seed:', error))
        : undefined;
    const started = await Promise.allSettled([database, temporal, goSeed]);
    const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await stopTestPlatform(platform);
    throw error;
  }
  if (!platform.temporal) throw new Error('the Temporal dev server did not start');
  process.env.TEST_TEMPORAL_ADDRESS = platform.temporal.address;
  process.env.TEST_TEMPORAL_NAMESPACE = TEST_TEMPORAL_NAMESPACE;
  process.env.TEST_TEMPORAL_UI_URL = platform.temporal.uiUrl;
}

export async function stopTestPlatform(platform: TestPlatform): Promise<void> {
  await platform.temporal?.stop().catch((error: unknown) => console.error('stopping Temporal dev server:', error));
  await platform.postgres?.stop().catch((error: unknown) => console.error('stopping embedded PostgreSQL:', error));
  await fs.rm(platform.tempDir, { recursive: true, force: true });
}
