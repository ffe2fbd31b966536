import type { PrismaClient } from './db';

// API key rows: only a hash of each key is stored (api/auth/api-keys.ts makes and checks the keys).

/** What these functions need from Prisma: the client, or a transaction client. */
export type ApiKeyDb = Pick<PrismaClient, 'apiKey'>;

export function insertApiKey(db: ApiKeyDb, row: { name: string; role: string; prefix: string; keyHash: string }) {
  return db.apiKey.create({ data: row });
}

/** Keys oldest first, without their hashes; revoked ones too unless `includeRevoked` is false. */
export function apiKeysOldestFirst(db: ApiKeyDb, includeRevoked: boolean | undefined) {
  return db.apiKey.findMany({
    where: includeRevoked === false ? { revokedAt: null } : {},
    orderBy: { createdAt: 'asc' },
    omit: { keyHash: true },
  });
}

/** Revokes a key unless it was revoked already (the first revocation time stays); the key, or null. */
export async function revokeApiKeyRow(db: ApiKeyDb, id: string) {
  await db.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
  return db.apiKey.findUnique({ where: { id }, omit: { keyHash: true } });
}

export function apiKeyByHash(db: ApiKeyDb, keyHash: string) {
  return db.apiKey.findUnique({ where: { keyHash } });
}

export async function recordKeyUse(db: ApiKeyDb, id: string, at: Date): Promise<void> {
  await db.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
}

// Any constant identifies the bootstrap lock; it only has to differ from other advisory locks in the DB.
const BOOTSTRAP_LOCK_ID = 0x656c6b01;

/**
 * Runs `create` in a transaction when no key exists at all (revoked ones count); null otherwise. An
 * advisory transaction lock serialises the check-and-create, so concurrent starts create one key.
 */
export function whenNoApiKeys<T>(db: PrismaClient, create: (tx: ApiKeyDb) => Promise<T>): Promise<T | null> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK_ID}::bigint)`;
    if ((await tx.apiKey.count()) > 0) return null;
    return create(tx);
  });
}
