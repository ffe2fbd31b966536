import { randomBytes, randomUUID } from 'node:crypto';
import { createPrismaClient, type Prisma, type PrismaClient } from '../../prisma/client';
import { createDatabase, dropDatabase } from '../../service/embedded-postgres';
import { applyMigrations } from '../../service/migrate';

// A fresh, fully migrated database per caller (usually per test file) on the run's shared cluster.
export interface TestDatabase {
  url: string;
  prisma: PrismaClient;
  drop(): Promise<void>;
}

export function testDatabaseAdminUrl(): string {
  const url = process.env.TEST_DATABASE_ADMIN_URL;
  if (!url) throw new Error('TEST_DATABASE_ADMIN_URL is not set: run through jest (jest.config.js globalSetup)');
  return url;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = testDatabaseAdminUrl();
  const name = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await createDatabase(adminUrl, name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await applyMigrations(url.toString());
  const prisma = createPrismaClient(url.toString());
  return {
    url: url.toString(),
    prisma,
    async drop() {
      await prisma.$disconnect();
      await dropDatabase(adminUrl, name);
    },
  };
}

/** A loop row with only what the schema requires (a queued loop on /repo), plus `fields`; returns its id. */
export async function insertLoop(prisma: PrismaClient, fields: Partial<Prisma.LoopUncheckedCreateInput> = {}): Promise<string> {
  const id = fields.id ?? randomUUID();
  await prisma.loop.create({
    data: { id, workflowId: `loop-${id}`, requestHash: 'h', status: 'QUEUED', phase: 'QUEUED', repoUrl: '/repo', baseRef: 'main', maxIterations: 3, input: {}, ...fields },
  });
  return id;
}
