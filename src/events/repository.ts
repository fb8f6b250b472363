import type { Db } from '../db';
import type { EventRow } from '../db/tables/events';
import type { EventType } from './catalogue';
import { expiredBefore } from './retention';

/**
 * Reads of the events outbox for the events API (writes are `outbox.ts`, inside the changes they report). An expired
 * event is not read, whether or not the cleanup has removed it yet.
 */

const eventIdPattern = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The user's events not yet expired. */
function ownEvents(db: Db, userId: string) {
  return db.selectFrom('events').selectAll().where('user_id', '=', userId).where('created_at', '>=', expiredBefore);
}

/** The user's event; undefined when absent, another user's, expired, or not an event id. */
export async function findOwnEvent(db: Db, userId: string, eventId: string): Promise<EventRow | undefined> {
  if (!eventIdPattern.test(eventId)) return undefined;
  return ownEvents(db, userId).where('id', '=', eventId).executeTakeFirst();
}

/** Newest first; `after` is the last id of the previous page (the events older than it follow). */
export async function listOwnEvents(db: Db, userId: string, filter: { type?: EventType; after?: string; limit: number }): Promise<EventRow[]> {
  let query = ownEvents(db, userId);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  if (filter.after !== undefined) query = query.where('id', '<', filter.after);
  return query.orderBy('id', 'desc').limit(filter.limit).execute();
}
