import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { PROJECT_ROOT } from '../config/project-root';

// Applies prisma/migrations to the database with the Prisma CLI (`migrate deploy`), run as a child
// process without a shell. The CLI reads prisma.config.ts, whose pg adapter connects to DATABASE_URL.
export class MigrationError extends Error {}

const PRISMA_CLI = path.join(PROJECT_ROOT, 'node_modules', 'prisma', 'build', 'index.js');
const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'prisma', 'migrations');

/**
 * Brings the database to the committed migrations. When every one is already applied it returns
 * 'current' without starting the Prisma CLI, which costs seconds on every restart.
 */
export async function applyMigrations(databaseUrl: string): Promise<'applied' | 'current'> {
  if (await migrationsCurrent(databaseUrl)) return 'current';
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [PRISMA_CLI, 'migrate', 'deploy'],
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, DATABASE_URL: databaseUrl, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' },
        timeout: 120_000,
        maxBuffer: 10 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (!error) return resolve();
        const how = error.killed ? 'timed out' : `exited with ${error.code ?? error.signal}`;
        reject(
          new MigrationError(
            `prisma migrate deploy ${how} (database ${redact(databaseUrl)}):\n${stdout}\n${stderr}`.trim(),
          ),
        );
      },
    );
  });
  return 'applied';
}

/** Whether every migration directory is recorded as finished (and none rolled back) in the database. */
async function migrationsCurrent(databaseUrl: string): Promise<boolean> {
  const committed = (await fs.readdir(MIGRATIONS_DIR, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const table = await client.query(`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`);
    if (!table.rows[0]?.present) return false;
    const done = await client.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Set(done.rows.map((row) => row.migration_name));
    return committed.every((name) => applied.has(name));
  } finally {
    await client.end();
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
