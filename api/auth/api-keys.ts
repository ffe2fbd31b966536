import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { unstorableCharacter } from '../../domain/storable-text';
import {
  apiKeyByHash,
  apiKeysOldestFirst,
  insertApiKey,
  recordKeyUse,
  revokeApiKeyRow,
  whenNoApiKeys,
  type ApiKeyDb,
} from '../../store/api-keys';
import type { PrismaClient } from '../../store/db';

// API keys: `elk_` + 32 random bytes (base64url, 43 chars). Only sha256(key) is stored. A slow password
// hash (bcrypt, scrypt, argon2) exists to make guessing low-entropy passwords expensive; a 256-bit random
// key cannot be guessed, so a fast hash loses nothing, can be looked up through a unique index in one
// query, and costs microseconds per request. A database leak exposes hashes that cannot be reversed.
// `prefix` (the first 12 characters, e.g. `elk_AbCdEfGh`) identifies a key in listings and logs; the
// 35 characters it leaves hidden still carry 210 random bits.

export const ROLES = ['submitter', 'approver', 'admin'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

export const KEY_TOKEN_PREFIX = 'elk_';
const KEY_RANDOM_BYTES = 32;
const DISPLAY_PREFIX_LENGTH = KEY_TOKEN_PREFIX.length + 8;
// A well-formed key: the token prefix and exactly 43 base64url characters.
const KEY_PATTERN = /^elk_[A-Za-z0-9_-]{43}$/;
/** lastUsedAt is written at most this often per key, so reads do not turn into a write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** The authenticated caller, as handlers see it (`request.principal`). */
export interface Principal {
  keyId: string;
  name: string;
  role: Role;
}

/** A key as listed: everything but the secret (never stored) and its hash. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The key itself: shown once, never stored, never retrievable again. */
  key: string;
}

export class ApiKeyInputError extends Error {}

/** What these functions need from Prisma: the client, or a transaction client. */
export type { ApiKeyDb };

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateApiKey(): string {
  return KEY_TOKEN_PREFIX + randomBytes(KEY_RANDOM_BYTES).toString('base64url');
}

function toInfo(row: {
  id: string;
  name: string;
  role: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    // Rows are only written through createApiKey, which validates the role; a tampered row fails loudly.
    role: roleSchema.parse(row.role),
    prefix: row.prefix,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}

// The unstorable-character check also covers the offline admin command, which does not go through HTTP.
const nameSchema = z
  .string()
  .trim()
  .min(1, 'name must not be empty')
  .max(100, 'name must be at most 100 characters')
  .superRefine((name, ctx) => {
    const problem = unstorableCharacter(name);
    if (problem) ctx.addIssue({ code: 'custom', message: `name ${problem}` });
  });

export async function createApiKey(prisma: ApiKeyDb, input: { name: string; role: Role }): Promise<CreatedApiKey> {
  const name = nameSchema.safeParse(input.name);
  if (!name.success) throw new ApiKeyInputError(name.error.issues.map((i) => i.message).join('; '));
  const role = roleSchema.safeParse(input.role);
  if (!role.success)
    throw new ApiKeyInputError(`role must be one of ${ROLES.join(', ')} (got ${JSON.stringify(input.role)})`);
  const key = generateApiKey();
  const row = await insertApiKey(prisma, {
    name: name.data,
    role: role.data,
    prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
    keyHash: hashApiKey(key),
  });
  return { ...toInfo(row), key };
}

export async function listApiKeys(prisma: ApiKeyDb, options: { includeRevoked?: boolean } = {}): Promise<ApiKeyInfo[]> {
  const rows = await apiKeysOldestFirst(prisma, options.includeRevoked);
  return rows.map(toInfo);
}

/**
 * Revokes a key; revoking an already revoked key keeps its first revocation time.
 * Returns the key, or null when no key has that id.
 */
export async function revokeApiKey(prisma: ApiKeyDb, id: string): Promise<ApiKeyInfo | null> {
  if (!z.uuid().safeParse(id).success) return null;
  const row = await revokeApiKeyRow(prisma, id);
  return row ? toInfo(row) : null;
}

/**
 * The principal for a presented key, or null when the key is malformed, unknown or revoked.
 * Also records lastUsedAt (at most once a minute per key).
 */
export async function verifyApiKey(prisma: ApiKeyDb, key: string, now: Date = new Date()): Promise<Principal | null> {
  if (!KEY_PATTERN.test(key)) return null;
  const row = await apiKeyByHash(prisma, hashApiKey(key));
  if (!row || row.revokedAt) return null;
  const role = roleSchema.safeParse(row.role);
  if (!role.success) return null;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await recordKeyUse(prisma, row.id, now);
  }
  return { keyId: row.id, name: row.name, role: role.data };
}

/**
 * A fresh installation has no keys, so nobody could call the API. When no key exists at all (revoked ones
 * count: an operator who revoked every key meant it), create an admin key named `bootstrap-admin` and
 * return it so the caller can print it once. Returns null otherwise. Safe against concurrent starts: an
 * advisory transaction lock serialises the check-and-create.
 */
export async function ensureBootstrapAdminKey(prisma: PrismaClient): Promise<CreatedApiKey | null> {
  return whenNoApiKeys(prisma, (tx) => createApiKey(tx, { name: 'bootstrap-admin', role: 'admin' }));
}
