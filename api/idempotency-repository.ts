import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../src/db';

/**
 * The rows of `idempotency_keys`, one per (user, key), as the protocol in `api/idempotency.ts` writes them: claimed by
 * one request at a time under a claim id of its own, renewed while it runs, then holding the answer replayed for the
 * key's window, or released. Each write is one named conditional statement; every write of a claimed row is
 * conditional on its claim (`claimedRow`), so a request taken over after its lease ran out writes nothing.
 */

/** How long a key counts from its first use (publishing-api.md "Idempotency replay window"). */
export const idempotencyWindowMs = 24 * 60 * 60 * 1000;

/** An answer as it is stored and replayed. */
export interface StoredResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

interface Key {
  userId: string;
  key: string;
}

/** A key held by one request's claim. */
export interface Claim extends Key {
  claimId: string;
}

/**
 * A new claim when it now owns the key (its id, and `made`: what an earlier claim of the key committed, when this one
 * took over a claim whose process died after its create's statement); null when another request holds the key (or
 * did). A claim is taken with one INSERT ... ON CONFLICT: the key is new, its row is past the window, or its row is an
 * identical request's claim whose lease ran out (its process died).
 */
export async function claimKey(
  db: Db,
  request: Key & { method: string; path: string; fingerprint: string },
  timing: { leaseMs: number; windowMs: number },
): Promise<{ claimId: string; made: unknown } | null> {
  const claimId = randomUUID();
  const lease = sql<Date>`now() + ${`${timing.leaseMs} milliseconds`}::interval`;
  const windowStart = sql<Date>`now() - ${`${timing.windowMs} milliseconds`}::interval`;
  const claimed = await db
    .insertInto('idempotency_keys')
    .values({
      user_id: request.userId,
      key: request.key,
      fingerprint: request.fingerprint,
      method: request.method.toUpperCase(),
      path: request.path,
      state: 'in_progress',
      locked_until: lease,
      claim_id: claimId,
      response_status: null,
      response_body: null,
      response_headers: null,
      created_at: sql<Date>`now()`,
    })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'key'])
        .doUpdateSet((eb) => ({
          fingerprint: eb.ref('excluded.fingerprint'),
          method: eb.ref('excluded.method'),
          path: eb.ref('excluded.path'),
          state: 'in_progress',
          locked_until: eb.ref('excluded.locked_until'),
          claim_id: eb.ref('excluded.claim_id'),
          response_status: null,
          response_body: null,
          response_headers: null,
          // A key past its window starts a new one; a takeover of a dead claim keeps the window of the key's first use,
          // and what that claim made (the takeover answers from it instead of making it again).
          created_at: sql<Date>`case when ${eb.ref('idempotency_keys.created_at')} < ${windowStart} then ${eb.ref('excluded.created_at')} else ${eb.ref('idempotency_keys.created_at')} end`,
          made: sql<string | null>`case when ${eb.ref('idempotency_keys.created_at')} < ${windowStart} then null else ${eb.ref('idempotency_keys.made')} end`,
        }))
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.created_at', '<', windowStart),
            eb.and([
              eb('idempotency_keys.state', '=', 'in_progress'),
              eb('idempotency_keys.locked_until', '<', sql<Date>`now()`),
              eb('idempotency_keys.fingerprint', '=', request.fingerprint),
            ]),
          ]),
        ),
    )
    .returning('made')
    .executeTakeFirst();
  return claimed === undefined ? null : { claimId, made: claimed.made ?? null };
}

/** The key's row as another request holds it (its fingerprint, state and stored answer); undefined once released. */
export function readKey(db: Db, { userId, key }: Key) {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'method', 'path', 'state', 'response_status', 'response_body', 'response_headers'])
    .where('user_id', '=', userId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Extends the claim's lease while its request runs. */
export async function renewClaim(db: Db, claim: Claim, leaseMs: number): Promise<void> {
  await claimedRow(db, claim)
    .set({ locked_until: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval` })
    .execute();
}

/** Stores the answer for replay and completes the key; false when the claim no longer holds it. */
export async function storeAnswer(db: Db, claim: Claim, response: StoredResponse): Promise<boolean> {
  const stored = await claimedRow(db, claim)
    .set({
      state: 'completed',
      response_status: response.status,
      response_body: response.body === undefined ? null : JSON.stringify(response.body),
      response_headers: JSON.stringify(response.headers ?? {}),
    })
    .executeTakeFirst();
  return stored.numUpdatedRows > 0n;
}

/** Gives the key back so the same key may run again; false when the claim no longer holds it. */
export async function releaseClaim(db: Db, claim: Claim): Promise<boolean> {
  const released = await db
    .deleteFrom('idempotency_keys')
    .where('user_id', '=', claim.userId)
    .where('key', '=', claim.key)
    .where('state', '=', 'in_progress')
    .where('claim_id', '=', claim.claimId)
    .executeTakeFirst();
  return released.numDeletedRows > 0n;
}

/**
 * Gives the key back after an unexpected failure, unless the request had made something (`made`: its create's
 * statement committed): then the claim is kept with its lease ended, so the next identical request takes it over at
 * once and answers from what was made, never making it again. False when the claim no longer holds the key.
 */
export async function releaseUnlessMade(db: Db, claim: Claim): Promise<boolean> {
  const { rows } = await sql<{ released: number }>`
    with released as (
      delete from idempotency_keys
      where user_id = ${claim.userId} and key = ${claim.key} and state = 'in_progress' and claim_id = ${claim.claimId} and made is null
      returning 1
    ), lapsed as (
      update idempotency_keys set locked_until = now()
      where user_id = ${claim.userId} and key = ${claim.key} and state = 'in_progress' and claim_id = ${claim.claimId} and made is not null
      returning 1
    )
    select (select count(*) from released) + (select count(*) from lapsed) as released`.execute(db);
  return Number(rows[0]?.released ?? 0) > 0;
}

/**
 * The row while this claim still holds it: the key, still in progress, under this claim's id. A request whose lease
 * ran out and was taken over matches nothing here.
 */
function claimedRow(db: Db, claim: Claim) {
  return db
    .updateTable('idempotency_keys')
    .where('user_id', '=', claim.userId)
    .where('key', '=', claim.key)
    .where('state', '=', 'in_progress')
    .where('claim_id', '=', claim.claimId);
}

/** Rows past the window are dead weight; the worker or an operator may call this periodically. */
export async function deleteExpiredIdempotencyKeys(db: Db, windowMs = idempotencyWindowMs): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - ${`${windowMs} milliseconds`}::interval`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
