import { loadConfig } from '../config/service-config';
import { applyMigrations } from './migrate';
import { required } from './require-env';

// One-shot migration job (docker-compose `migrate`).
applyMigrations(required(loadConfig().databaseUrl, 'DATABASE_URL')).then(
  (outcome) =>
    console.log(outcome === 'applied' ? 'migrations applied' : 'database schema is current; nothing to apply'),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
