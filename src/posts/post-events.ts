import type { Transaction } from 'kysely';
import type { Database } from '../db';
import type { EventType } from '../events/catalogue';
import { recordEvents } from '../events/outbox';
import { currentRequestOrigin } from '../events/request-origin';
import { toViewOf, viewQuery, type PostViewRow } from './view-queries';

type Trx = Transaction<Database>;

/**
 * One event per post of `ids`, the post as the API shows it after the change, in the change's transaction. Its
 * request is the one being served, else the one the post records (an immediate publish reported by the worker).
 */
export async function recordPostEvents(trx: Trx, type: EventType, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await recordPostEventsOf(trx, type, await viewQuery(trx).where('posts.id', 'in', ids).orderBy('posts.id').execute());
}

/** `recordPostEvents` of rows already read as the view reads them (the write returned them: one round trip fewer). */
export async function recordPostEventsOf(trx: Trx, type: EventType, rows: ReadonlyArray<PostViewRow>): Promise<void> {
  if (rows.length === 0) return;
  const request = currentRequestOrigin();
  await recordEvents(trx, rows.map((row) => ({ userId: row.user_id, type, data: toViewOf(row), request: request ?? row.request_origin })));
}
