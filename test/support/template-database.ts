import { createDatabase } from '../../service/embedded-postgres';
import { applyMigrations } from '../../service/migrate';

// The migrated database every test database is copied from, made once a run by the global set-up. (No
// Prisma client here: the global set-up loads this without jest's module mapping, which the generated
// client's `.js` imports need.)

export const TEMPLATE_DATABASE = 'test_template';

export function testDatabaseAdminUrl(): string {
  const url = process.env.TEST_DATABASE_ADMIN_URL;
  if (!url) throw new Error('TEST_DATABASE_ADMIN_URL is not set: run through jest (jest.config.js globalSetup)');
  return url;
}

/** The URL of database `name` on the test cluster. */
export function testDatabaseUrl(name: string): string {
  const url = new URL(testDatabaseAdminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** Migrates the template; with nobody connected to it afterwards, copies of it can be made. */
export async function createTemplateDatabase(): Promise<void> {
  await createDatabase(testDatabaseAdminUrl(), TEMPLATE_DATABASE);
  await applyMigrations(testDatabaseUrl(TEMPLATE_DATABASE));
}
