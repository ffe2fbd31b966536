import { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { Prisma } from '../../prisma/client';
import { LOOP_SEARCH_ATTRIBUTES } from '../../service/search-attributes';
import { createDatabase, dropDatabase } from '../../service/embedded-postgres';
import { applyMigrations } from '../../service/migrate';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { testDatabaseAdminUrl } from '../support/template-database';

// The platform layer works for real: migrations, Prisma through the pg adapter, Temporal dev server.
describe('platform', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('applies the migrations to a fresh database', async () => {
    const rows = await db.prisma.$queryRaw<Array<{ migration_name: string; finished_at: Date | null }>>`
      SELECT migration_name, finished_at FROM _prisma_migrations`;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.finished_at !== null)).toBe(true);
  });

  it('a database with every migration applied is current: the Prisma CLI is not started again', async () => {
    expect(await applyMigrations(db.url)).toBe('current');
    const admin = testDatabaseAdminUrl();
    const name = `test_fresh_${process.pid}`;
    await createDatabase(admin, name);
    try {
      const url = new URL(admin);
      url.pathname = `/${name}`;
      expect(await applyMigrations(url.toString())).toBe('applied');
      expect(await applyMigrations(url.toString())).toBe('current');
    } finally {
      await dropDatabase(admin, name);
    }
  });

  it('creates a column for every scalar field of every model (migrations match the schema)', async () => {
    // ::text because the pg adapter cannot read the catalog type `name` (prisma/orm#27403).
    const columns = await db.prisma.$queryRaw<Array<{ table_name: string; column_name: string }>>`
      SELECT table_name::text, column_name::text FROM information_schema.columns WHERE table_schema = 'public'`;
    const actual = new Set(columns.map((c) => `${c.table_name}.${c.column_name}`));
    const namespace = Prisma as unknown as Record<string, Record<string, string>>;
    const missing = Object.values(Prisma.ModelName).flatMap((model) =>
      Object.values(namespace[`${model}ScalarFieldEnum`] ?? {})
        .map((field) => `${model}.${field}`)
        .filter((column) => !actual.has(column)),
    );
    // If this fails, schema.prisma changed without a new migration: see prisma/README.md.
    expect(missing).toEqual([]);
  });

  it('writes and reads a Loop with a Json column through the adapter', async () => {
    const input = { goal: 'fix the flaky test', gates: ['lint', 'test'], nested: { retries: 2, ok: true, none: null } };
    await db.prisma.loop.create({
      data: {
        id: 'loop-1',
        workflowId: 'wf-loop-1',
        requestHash: 'sha256:0000',
        status: 'running',
        phase: 'contract',
        repoUrl: 'file:///tmp/repo.git',
        baseRef: 'main',
        maxIterations: 3,
        input,
      },
    });

    const loop = await db.prisma.loop.findUniqueOrThrow({ where: { id: 'loop-1' } });
    expect(loop.input).toEqual(input);
    expect(loop.roundIteration).toBe(0);
    expect(loop.createdAt).toBeInstanceOf(Date);
  });

  it('has a Temporal dev server with the loop search attributes registered', async () => {
    const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS });
    try {
      const namespace = process.env.TEST_TEMPORAL_NAMESPACE ?? 'default';
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      expect(customAttributes?.LoopStatus).toBe(encodeSearchAttributeIndexedValueType('KEYWORD'));
      for (const name of Object.keys(LOOP_SEARCH_ATTRIBUTES)) expect(customAttributes).toHaveProperty(name);
    } finally {
      await connection.close();
    }
  });
});
