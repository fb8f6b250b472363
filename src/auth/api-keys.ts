import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors';
import type { Db } from '../db';
import type { ApiKeyRow } from '../db/tables/api-keys';
import { precompiled } from '../db/precompiled';
import { isUuid } from '../db/uuid';
import type { PlanName } from '../plans';
import type { ScopeList } from './scopes';

/**
 * API keys: `hld_` + 40 base62 characters, shown once at creation. Only the SHA-256 of the whole secret is stored;
 * the first 12 characters (`hld_` + 8) are kept in clear to find candidate rows and to show in listings.
 */

const keyPrefix = 'hld_';
const secretLength = 40;
const displayPrefixLength = keyPrefix.length + 8;
const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const keyShape = new RegExp(`^${keyPrefix}[0-9A-Za-z]{${secretLength}}$`);

function generateSecret(): string {
  let out = keyPrefix;
  // Rejection sampling keeps every character uniformly likely.
  while (out.length < keyPrefix.length + secretLength) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < keyPrefix.length + secretLength) out += base62[byte % 62];
    }
  }
  return out;
}

// The one-shot digest: a Hash object per call (createHash) was most of authentication's CPU on a cached key (issue 15).
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export interface AuthenticatedKey {
  keyId: string;
  userId: string;
  scopes: ScopeList;
  plan: PlanName;
  /** When the calling key stops working (null: never); a key it creates may not outlive it (`lifetimeRefusal`). */
  expiresAt: Date | null;
}

/** The row of a key as authentication needs it: who, which scopes, the owner's plan, and whether it still works. */
export interface KeyRecord {
  id: string;
  user_id: string;
  scopes: ScopeList;
  plan: PlanName;
  revoked_at: Date | null;
  expires_at: Date | null;
  last_used_at: Date | null;
}

/**
 * The secret of an exact `Bearer <key>` header, or 401 saying what is wrong with it. With `findKey` and `acceptKey`,
 * the steps of authentication; `src/auth/key-cache.ts` puts them together behind its cache. The 401 messages say
 * which of missing/invalid/revoked/expired.
 */
export function bearerSecret(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') {
    throw new ApiError('unauthorized', 'Missing API key: send the header Authorization: Bearer <API_KEY>');
  }
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  if (!match) {
    throw new ApiError('unauthorized', 'Malformed Authorization header: expected Authorization: Bearer <API_KEY>');
  }
  const secret = match[1];
  if (!keyShape.test(secret)) throw invalidKey();
  return secret;
}

// The owner's plan comes with the key: one round trip authenticates a request and says which limits apply. Read
// again every couple of seconds per key (`key-cache.ts`): compiled once, a named statement (src/db/precompiled.ts).
const keysByPrefixQuery = precompiled((db, { prefix }: { prefix: string }) =>
  db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(['api_keys.id', 'api_keys.user_id', 'api_keys.key_hash', 'api_keys.scopes', 'api_keys.revoked_at', 'api_keys.expires_at', 'api_keys.last_used_at', 'users.plan'])
    .where('api_keys.prefix', '=', prefix),
);

/** The key whose hash matches the secret's (compared in constant time), with its owner's plan; null when none. */
export async function findKey(db: Db, secret: string): Promise<KeyRecord | null> {
  const hash = Buffer.from(hashSecret(secret), 'hex');
  const candidates = await keysByPrefixQuery.execute(db, { prefix: secret.slice(0, displayPrefixLength) });
  const row = candidates.find((candidate) => timingSafeEqual(Buffer.from(candidate.key_hash, 'hex'), hash));
  if (!row) return null;
  const { key_hash: _hash, ...record } = row;
  return record;
}

/**
 * 401 when the key is revoked or expired at `now`; otherwise who is calling. Records `last_used_at` at most once a
 * minute per key (on `row` too, so a cached row does not write again), so busy keys neither write nor wait on every request.
 */
export async function acceptKey(db: Db, row: KeyRecord, now: Date): Promise<AuthenticatedKey> {
  if (row.revoked_at !== null) {
    throw new ApiError('unauthorized', `This API key was revoked on ${row.revoked_at.toISOString()}; use another key`);
  }
  if (row.expires_at !== null && row.expires_at.getTime() <= now.getTime()) {
    throw new ApiError('unauthorized', `This API key expired on ${row.expires_at.toISOString()}; create a new key`);
  }
  const staleBefore = new Date(now.getTime() - 60_000);
  if (row.last_used_at === null || row.last_used_at < staleBefore) {
    row.last_used_at = now;
    await db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', row.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', staleBefore)]))
      .execute();
  }
  return { keyId: row.id, userId: row.user_id, scopes: row.scopes, plan: row.plan, expiresAt: row.expires_at };
}

export function invalidKey(): ApiError {
  return new ApiError('unauthorized', 'Invalid API key');
}

interface CreatedKey {
  row: ApiKeyRow;
  /** The secret; returned once, never stored. */
  apiKey: string;
}

export async function createApiKey(
  db: Db,
  input: { userId: string; name: string; scopes: ScopeList; expiresAt: Date | null },
): Promise<CreatedKey> {
  const apiKey = generateSecret();
  const row = await db
    .insertInto('api_keys')
    .values({
      user_id: input.userId,
      name: input.name,
      prefix: apiKey.slice(0, displayPrefixLength),
      key_hash: hashSecret(apiKey),
      scopes: input.scopes === null ? null : [...input.scopes],
      expires_at: input.expiresAt,
      revoked_at: null,
      last_used_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, apiKey };
}

export async function listApiKeys(db: Db, userId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Revokes the key if it belongs to the user (a second revoke keeps the first time). Null when not theirs or malformed. */
export async function revokeApiKey(db: Db, keyId: string, userId: string | null, now = new Date()): Promise<ApiKeyRow | null> {
  if (!isUuid(keyId)) return null;
  let query = db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
    .where('id', '=', keyId);
  if (userId !== null) query = query.where('user_id', '=', userId);
  return (await query.returningAll().executeTakeFirst()) ?? null;
}
