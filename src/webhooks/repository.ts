import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { EventType } from '../events/catalogue';
import type { RetiredSecret, WebhookEndpointRow } from '../db/tables/webhooks';
import { isUuid } from '../db/uuid';

/** The `webhook_endpoints` table, as free functions taking `db` or a transaction first. */

type Trx = Transaction<Database>;


/**
 * Serialises the endpoint-limit decisions of one user; returns how many endpoints they have. `FOR NO KEY UPDATE`
 * conflicts with itself, which is all the limit needs; `FOR UPDATE` also held back every insert referencing the user
 * (a foreign-key check takes `FOR KEY SHARE`) while it was held or waited for (README "Accounts").
 */
export async function lockAndCountEndpoints(trx: Trx, userId: string): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forNoKeyUpdate().executeTakeFirstOrThrow();
  const row = await trx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertEndpoint(
  trx: Trx,
  row: { id: string; user_id: string; url: string; events: EventType[] | null; description: string | null; secret_sealed: string },
): Promise<WebhookEndpointRow> {
  return trx.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The user's endpoint; undefined when absent, another user's, or not a UUID. */
export async function findOwnEndpoint(db: Db, userId: string, endpointId: string): Promise<WebhookEndpointRow | undefined> {
  if (!isUuid(endpointId)) return undefined;
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).where('user_id', '=', userId).executeTakeFirst();
}

/** The user's endpoint, its row locked until the transaction ends; undefined as `findOwnEndpoint`. */
export async function lockOwnEndpoint(trx: Trx, userId: string, endpointId: string): Promise<WebhookEndpointRow | undefined> {
  if (!isUuid(endpointId)) return undefined;
  return trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

/** Oldest first (the order they were added in). */
export async function listOwnEndpoints(db: Db, userId: string): Promise<WebhookEndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

export interface EndpointChanges {
  url?: string;
  events?: EventType[] | null;
  description?: string | null;
  enabled?: boolean;
}

/**
 * Switching an endpoint on clears why it was switched off and, when it was off, starts the five-day failing run
 * afresh: the run that disabled it would otherwise disable it again at its first failure. Saying `enabled: true` to
 * an endpoint that is on leaves its run alone.
 */
export async function updateOwnEndpoint(db: Db, userId: string, endpointId: string, changes: EndpointChanges): Promise<WebhookEndpointRow | undefined> {
  if (!isUuid(endpointId)) return undefined;
  const switchedOn = changes.enabled === true ? { disabled_reason: null, failing_since: sql<Date | null>`case when enabled then failing_since end` } : {};
  return db
    .updateTable('webhook_endpoints')
    .set({ ...changes, ...switchedOn, updated_at: sql`now()` })
    .where('id', '=', endpointId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteOwnEndpoint(db: Db, userId: string, endpointId: string): Promise<WebhookEndpointRow | undefined> {
  if (!isUuid(endpointId)) return undefined;
  return db.deleteFrom('webhook_endpoints').where('id', '=', endpointId).where('user_id', '=', userId).returningAll().executeTakeFirst();
}

/**
 * The current secret is retired (signing beside the new one for `overlapMs`) in front of the retired ones still
 * signing, in one statement; beyond `keepRetired` the oldest stops at once. Expired ones are dropped here.
 */
export async function rotateOwnSecret(
  db: Db,
  userId: string,
  endpointId: string,
  newSealed: string,
  rotation: { overlapMs: number; keepRetired: number },
): Promise<WebhookEndpointRow | undefined> {
  if (!isUuid(endpointId)) return undefined;
  const retiring = sql`jsonb_build_object('sealed', secret_sealed, 'expires_at', now() + ${`${rotation.overlapMs} milliseconds`}::interval)`;
  return db
    .updateTable('webhook_endpoints')
    .set({
      retired_secrets: sql<RetiredSecret[]>`(
        select coalesce(jsonb_agg(secret order by n), '[]'::jsonb) from (
          select secret, n from jsonb_array_elements(jsonb_build_array(${retiring}) || retired_secrets) with ordinality as s(secret, n)
          where (secret ->> 'expires_at')::timestamptz > now()
          order by n
          limit ${rotation.keepRetired}
        ) kept
      )`,
      secret_sealed: newSealed,
      updated_at: sql`now()`,
    })
    .where('id', '=', endpointId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * The endpoint's delivery attempts, newest first (ties by id), optionally of one event. `after` is an attempt id: the
 * attempts that sort after it follow. One that no longer exists (kept 30 days, as are all older ones) ends the list.
 */
export async function listDeliveries(db: Db, endpointId: string, page: { after?: string; eventId?: string; limit: number }) {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  if (page.eventId !== undefined) query = query.where('event_id', '=', page.eventId);
  if (page.after !== undefined) {
    query = query.where(
      sql<boolean>`(attempted_at, id) < (select cursor.attempted_at, cursor.id from webhook_deliveries cursor where cursor.id = ${page.after} and cursor.endpoint_id = ${endpointId})`,
    );
  }
  return query.orderBy('attempted_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}
