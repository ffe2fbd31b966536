import { randomBytes, randomUUID } from 'node:crypto';
import { createPrismaClient, type Prisma, type PrismaClient } from '../../prisma/client';
import { createDatabase, dropDatabase } from '../../service/embedded-postgres';
import { TEMPLATE_DATABASE, testDatabaseAdminUrl, testDatabaseUrl } from './template-database';

// A fresh, fully migrated database per caller (usually per test file) on the run's shared cluster: a copy
// of the template the global set-up migrated once (CREATE DATABASE … TEMPLATE takes a fraction of a
// second; running the Prisma CLI's migrate deploy for each file took 5–13 s of every file's set-up).
export interface TestDatabase {
  url: string;
  prisma: PrismaClient;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = testDatabaseAdminUrl();
  const name = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await createDatabase(adminUrl, name, TEMPLATE_DATABASE);
  const url = testDatabaseUrl(name);
  const prisma = createPrismaClient(url);
  return {
    url,
    prisma,
    async drop() {
      await prisma.$disconnect();
      await dropDatabase(adminUrl, name);
    },
  };
}

/** A loop row with only what the schema requires (a queued loop on /repo), plus `fields`; returns its id. */
export async function insertLoop(
  prisma: PrismaClient,
  fields: Partial<Prisma.LoopUncheckedCreateInput> = {},
): Promise<string> {
  const id = fields.id ?? randomUUID();
  await prisma.loop.create({
    data: {
      id,
      workflowId: `loop-${id}`,
      requestHash: 'h',
      status: 'QUEUED',
      phase: 'QUEUED',
      repoUrl: '/repo',
      baseRef: 'main',
      maxIterations: 3,
      input: {},
      ...fields,
    },
  });
  return id;
}
