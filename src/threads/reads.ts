import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { PostRow } from '../db/tables/posts';
import { rowVersion } from '../posts/attempt-marks';
import type { OwnPostRow } from '../posts/view-queries';
import { deleteSupported } from '../platforms/capabilities';

/**
 * The reads of a thread's rows (one row per part, `thread_id` + `thread_order`), and of the failure its
 * `thread.failed` event recorded. Its status changes are in `repository.ts`, its events in `thread-events.ts`.
 */

type Trx = Transaction<Database>;

/**
 * A thread's part as its reads and claims return it: the row, and its account's `via` (where an Instagram account
 * publishes through, which decides whether a part can be deleted: `deleteSupported`), so a claim needs no read of the
 * account. Null when the account row is gone.
 */
export type ThreadPartRow = PostRow & { account_via: AccountRow['via'] };

/** Whether what a thread's account published can be deleted again (`deleteSupported`): its rollback is tried only then. */
export function rollbackSupportedOf(row: ThreadPartRow): boolean {
  const placement = typeof row.configuration?.placement === 'string' ? row.configuration.placement : undefined;
  return deleteSupported(row.platform, { via: row.account_via ?? undefined, placement });
}

export const accountVia = sql<AccountRow['via']>`(select accounts.via from accounts where accounts.id = posts.account_id)`.as('account_via');

/** The thread's parts in `thread_order`; with `lock`, under row locks (inside a transaction). */
export async function loadThreadParts(db: Db | Trx, threadId: string, options: { lock?: boolean } = {}): Promise<ThreadPartRow[]> {
  let query = db.selectFrom('posts').selectAll().select(accountVia).where('thread_id', '=', threadId).orderBy('thread_order');
  if (options.lock) query = query.forUpdate();
  return query.execute();
}

export async function threadPartIds(db: Db | Trx, threadId: string): Promise<string[]> {
  return (await db.selectFrom('posts').select('id').where('thread_id', '=', threadId).execute()).map((r) => r.id);
}

/** The part a thread's single first comment lives on (it is published under it). */
export async function lastPartId(db: Db, threadId: string): Promise<string> {
  return (await db.selectFrom('posts').select('id').where('thread_id', '=', threadId).orderBy('thread_order', 'desc').executeTakeFirstOrThrow()).id;
}

export async function threadAccountId(db: Db, threadId: string): Promise<string | null> {
  return (await db.selectFrom('posts').select('account_id').where('thread_id', '=', threadId).executeTakeFirst())?.account_id ?? null;
}

/** The user's parts of a thread, in order, with their versions (the drafts a promotion starts from and marks promoted only unchanged since). */
export async function loadOwnThreadParts(db: Db, userId: string, threadId: string): Promise<OwnPostRow[]> {
  return db.selectFrom('posts').selectAll().select(rowVersion).where('thread_id', '=', threadId).where('user_id', '=', userId).orderBy('thread_order').execute();
}

/**
 * The sentence and rollback report of a thread that failed, as its `thread.failed` event recorded them (the latest),
 * for an answer that could not read the workflow's result; null when it recorded none.
 */
export async function recordedThreadFailure(db: Db, userId: string, threadId: string): Promise<{ message: string | null; rollback: unknown } | null> {
  const event = await db
    .selectFrom('events')
    .select('data')
    .where('user_id', '=', userId)
    .where('type', '=', 'thread.failed')
    .where(sql<boolean>`data->>'thread_id' = ${threadId}`)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!event) return null;
  const data = event.data as { posts?: Array<{ error_message?: string | null }>; thread_rollback?: unknown };
  return { message: data.posts?.find((p) => p.error_message)?.error_message ?? null, rollback: data.thread_rollback ?? null };
}
