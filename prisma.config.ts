import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { defineConfig } from 'prisma/config';

// Prisma CLI configuration. Prisma 6.19's CLI can only work offline with the JS (Wasm) schema engine,
// which talks to Postgres through a driver adapter instead of a URL.

// WORKAROUND for https://github.com/prisma/orm/issues/27403 (open as of prisma 6.19.3):
// the migrate commands introspect pg_catalog, whose columns use the internal types `name` (oid 19) and
// `"char"` (oid 18, e.g. pg_constraint.contype). @prisma/adapter-pg maps neither and fails with
// "Column type 'name' could not be deserialized from the database" (same for 'char' once tables with
// constraints exist). Both are plain text on the wire (pg already returns JS strings), so we relabel
// them as `text` (oid 25) in the raw pg result, just before the adapter maps field types
// (PgQueryable.queryRaw calls this.performIO, then maps `fields[].dataTypeID`). performIO is not public
// API: if an upgrade removes it we fail loudly. Delete this wrapper once the upstream fix is released.
const PG_CATALOG_TEXT_OIDS = new Set([18 /* "char" */, 19 /* name */]);
const PG_TEXT_OID = 25;

type PgResult = { fields: Array<{ dataTypeID: number }> };
type PerformIO = (query: unknown) => Promise<PgResult>;

function reportCatalogTypesAsText<T extends object>(queryable: T): T {
  const target = queryable as T & { performIO?: PerformIO };
  if (typeof target.performIO !== 'function') {
    throw new Error(
      'prisma.config.ts: @prisma/adapter-pg no longer has performIO; revisit the prisma/orm#27403 workaround',
    );
  }
  const performIO = target.performIO.bind(target);
  target.performIO = async (query) => {
    const result = await performIO(query);
    for (const field of result.fields ?? []) {
      if (PG_CATALOG_TEXT_OIDS.has(field.dataTypeID)) field.dataTypeID = PG_TEXT_OID;
    }
    return result;
  };
  return queryable;
}

class PrismaPgForMigrate extends PrismaPg {
  override async connect() {
    const adapter = reportCatalogTypesAsText(await super.connect());
    // Transactions run on their own pooled connection object; patch those too.
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) =>
      reportCatalogTypesAsText(await startTransaction(isolationLevel));
    return adapter;
  }

  override async connectToShadowDb() {
    return reportCatalogTypesAsText(await super.connectToShadowDb());
  }
}

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join('prisma', 'schema.prisma'),
  migrations: { path: path.join('prisma', 'migrations') },
  adapter: async () => new PrismaPgForMigrate({ connectionString: process.env.DATABASE_URL }),
});
