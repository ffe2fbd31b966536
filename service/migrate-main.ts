import { loadConfig } from './config';
import { applyMigrations } from './migrate';
import { required } from './require-env';

// One-shot migration job (docker-compose `migrate`).
applyMigrations(required(loadConfig().databaseUrl, 'DATABASE_URL')).then(
  () => console.log('migrations applied'),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
