import type { Db } from '../db';
import type { DatabaseNotifications } from '../db/notifications';
import { type AuthenticatedKey, acceptKey, bearerSecret, findKey, hashSecret, invalidKey, type KeyRecord } from './api-keys';

/**
 * Authentication served from an in-process cache, so a key costs no database round trip per request.
 *
 * A key's row (with its owner's plan) is reused for a while after it was read; then it is read again. How long
 * depends on whether this process hears key changes (`herald_key_changes`, migration 0160: a key revoked, deleted,
 * rescoped or given a new expiry, an owner's plan changed), committed by any process or `herald keys revoke`:
 * - heard: the change drops the cached row at once, and a row is kept for `heardTtlMs` (30 s), the bound should a
 *   connection die without saying so;
 * - not heard (no notifications, or while their connection is down): a row is kept for `ttlMs` (2 s), which is then
 *   the bound on revocation across processes. Losing the connection drops every row read while it was up.
 * A row whose read overlapped a change heard (any key's) is kept only `ttlMs`: it may predate that change.
 * A key revoked through this process is forgotten at once (`forget`). Expiry is checked on every request against the
 * clock, cached or not. Unknown secrets are never cached (a new key works at once, and guessing cannot fill memory);
 * at most `maxEntries` keys are held, the least recently read dropped first.
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
  /** How long a key's row is reused while key changes are not heard; the bound on revocation then. Default 2 s. */
  ttlMs?: number;
  /** How long while they are heard. Default 30 s. */
  heardTtlMs?: number;
  /** The process's notifications connection (`src/db/notifications.ts`); without it, rows live `ttlMs`. */
  notifications?: DatabaseNotifications;
  maxEntries?: number;
  /** Milliseconds since the epoch (tests move it). */
  clock?: () => number;
}

const defaultKeyCacheTtlMs = 2_000;
const defaultHeardTtlMs = 30_000;

interface Entry {
  row: KeyRecord;
  readAt: number;
  ttlMs: number;
}

/** `key:<api key id>` or `user:<user id>` (migration 0160). */
function parseKeyChange(payload: string): { key: string } | { user: string } | null {
  const [kind, id] = payload.split(':');
  if (!id) return null;
  if (kind === 'key') return { key: id };
  if (kind === 'user') return { user: id };
  return null;
}

export function createKeyAuthenticator(db: Db, options: KeyCacheOptions = {}): KeyAuthenticator {
  const ttlMs = options.ttlMs ?? defaultKeyCacheTtlMs;
  const heardTtlMs = options.heardTtlMs ?? defaultHeardTtlMs;
  const maxEntries = options.maxEntries ?? 10_000;
  const clock = options.clock ?? Date.now;
  const notifications = options.notifications;
  const entries = new Map<string, Entry>();
  /** Counts the changes heard and the connection's losses: a read that saw it move may predate one of them. */
  let changesHeard = 0;
  const dropWhere = (matches: (row: KeyRecord) => boolean) => {
    for (const [digest, entry] of entries) if (matches(entry.row)) entries.delete(digest);
  };
  notifications?.on('herald_key_changes', (payload) => {
    changesHeard += 1;
    const change = parseKeyChange(payload);
    if (change === null) entries.clear();
    else if ('key' in change) dropWhere((row) => row.id === change.key);
    else dropWhere((row) => row.user_id === change.user);
  });
  notifications?.onDeaf(() => {
    changesHeard += 1;
    entries.clear();
  });

  async function read(secret: string, digest: string, now: number): Promise<Entry> {
    const heardBefore = notifications?.listening === true ? changesHeard : null;
    const row = await findKey(db, secret);
    entries.delete(digest);
    if (!row) throw invalidKey();
    // A loss of the connection counts as a change heard, so an unchanged count means it listened throughout.
    const heardThroughout = heardBefore !== null && heardBefore === changesHeard;
    const entry = { row, readAt: now, ttlMs: heardThroughout ? heardTtlMs : ttlMs };
    entries.set(digest, entry);
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    return entry;
  }

  return {
    async authenticate(authorization) {
      const secret = bearerSecret(authorization);
      const digest = hashSecret(secret);
      const now = clock();
      let entry = entries.get(digest);
      if (!entry || now - entry.readAt >= entry.ttlMs) entry = await read(secret, digest, now);
      return acceptKey(db, entry.row, new Date(now));
    },
    forget(keyId) {
      dropWhere((row) => row.id === keyId);
    },
  };
}
