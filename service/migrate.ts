import { execFile } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from './project-root';

// Applies prisma/migrations to the database with the Prisma CLI (`migrate deploy`), run as a child
// process without a shell. The CLI reads prisma.config.ts, whose pg adapter connects to DATABASE_URL.
export class MigrationError extends Error {}

const PRISMA_CLI = path.join(PROJECT_ROOT, 'node_modules', 'prisma', 'build', 'index.js');

export async function applyMigrations(databaseUrl: string): Promise<void> {
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
        reject(new MigrationError(`prisma migrate deploy ${how} (database ${redact(databaseUrl)}):\n${stdout}\n${stderr}`.trim()));
      },
    );
  });
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
