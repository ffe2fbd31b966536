import { randomBytes, randomUUID } from 'node:crypto';
import type { ActivityDeps } from '../../activities/deps';
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

/** The calling test file's database, for use inside its tests and hooks (useTestDatabase). */
export interface FileDatabase {
  readonly url: string;
  readonly prisma: PrismaClient;
  /** Activity dependencies with only the database: for activities that need nothing else. */
  readonly deps: ActivityDeps;
}

/** Registers the hooks that create the calling file's database before its tests and drop it after them. */
export function useTestDatabase(): FileDatabase {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });
  const current = (): TestDatabase => {
    if (!db) throw new Error('the test database exists inside tests and their hooks only');
    return db;
  };
  return {
    get url() {
      return current().url;
    },
    get prisma() {
      return current().prisma;
    },
    get deps() {
      return { prisma: current().prisma } as unknown as ActivityDeps;
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
