import type { Db } from '../db';
import { type AuthenticatedKey, acceptKey, bearerSecret, findKey, hashSecret, invalidKey, type KeyRecord } from './api-keys';

/**
 * Authentication served from a short-lived in-process cache, so a busy key costs no database round trip per request.
 *
 * A key's row (with its owner's plan) is reused for `ttlMs` after it was read; then it is read again. That is the
 * bound on revocation across API processes: a key revoked by another process (or `herald keys revoke`) is refused
 * here at most `ttlMs` later; a key revoked through this process is forgotten at once (`forget`). Plan changes reach
 * the burst limit within the same bound. Expiry is checked on every request against the clock, cached or not.
 * Unknown secrets are never cached (a new key works at once, and guessing cannot fill memory); at most `maxEntries`
 * keys are held, the least recently read dropped first.
 *
 * Entries are found by the secret's SHA-256 (never the secret itself). The lookup's timing can only tell a caller
 * whether some digest is cached, which says nothing about any secret; a miss goes to `findKey`, which compares the
 * stored hash in constant time.
 */
export interface KeyAuthenticator {
  authenticate(authorization: string | undefined): Promise<AuthenticatedKey>;
  /** Drops a key's cached row (after revoking it here), so this process refuses it from the next request on. */
  forget(keyId: string): void;
}

export interface KeyCacheOptions {
  /** How long a key's row is reused; the bound on revocation across processes. Default 2 s. */
  ttlMs?: number;
  maxEntries?: number;
  /** Milliseconds since the epoch (tests move it). */
  clock?: () => number;
}

const defaultKeyCacheTtlMs = 2_000;

export function createKeyAuthenticator(db: Db, options: KeyCacheOptions = {}): KeyAuthenticator {
  const ttlMs = options.ttlMs ?? defaultKeyCacheTtlMs;
  const maxEntries = options.maxEntries ?? 10_000;
  const clock = options.clock ?? Date.now;
  const entries = new Map<string, { row: KeyRecord; readAt: number }>();

  return {
    async authenticate(authorization) {
      const secret = bearerSecret(authorization);
      const digest = hashSecret(secret);
      const now = clock();
      let entry = entries.get(digest);
      if (!entry || now - entry.readAt >= ttlMs) {
        const row = await findKey(db, secret);
        entries.delete(digest);
        if (!row) throw invalidKey();
        entry = { row, readAt: now };
        entries.set(digest, entry);
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
      }
      return acceptKey(db, entry.row, new Date(now));
    },
    forget(keyId) {
      for (const [digest, entry] of entries) if (entry.row.id === keyId) entries.delete(digest);
    },
  };
}
