import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool, type Transaction } from 'kysely';
import { currentRequestOrigin } from '../events/request-origin';
import { withClaimHolds, type ClaimRecord } from '../idempotency/key-claim';
import type { Database, Db } from '../db';
import type { NewPostRow, PostRow, PostStatus, PostUpdate } from '../db/tables/posts';
import { refundQuota } from '../quota/quota';
import { failPendingCommentColumns, firstCommentNotSent } from './first-comment-not-sent';
import { recordPostEvents } from './post-events';

/**
 * The writes of the `posts` table of single posts, as free functions taking `db` or a transaction first (threads:
 * `src/threads/repository.ts`). Every status change is one named write conditional on the status it expects, so a
 * repeated activity or a concurrent request changes nothing twice; the quota a transition settles is settled through
 * `src/quota` in the same transaction, and so is the event it reports (`src/events`, the outbox).
 *
 * A post's lifecycle, and where each of its transitions is written:
 *   create (`draft`, `scheduled`, `publishing`), edit, promote, hide, delete a draft   this file (the API side)
 *   delete (`failed`, `published` → `deleted`), cancel (`scheduled` → `deleted`)        `removals.ts`
 *   `scheduled` → `publishing` (a claim), an attempt's mark                              `attempt-marks.ts`
 *   `publishing` → `published` | `failed` | `deleted` (cancelled), back to `scheduled`   `attempt-outcomes.ts`
 *   the first comment: `pending` → `posted` | `failed`, and a retry's `failed` → `pending` `first-comment-repository.ts`
 * Reads are in `view-queries.ts` and `reconcile-queries.ts`; the events a transaction writes in `post-events.ts`.
 */

type Trx = Transaction<Database>;
type DbOrTrx = Db | Trx;


/**
 * Inserts the rows; with a `guard` (`unchangedSince`) or a `claimed` record (what an Idempotency-Key's request made,
 * `claimRecordOf`), in one statement that fails, inserting nothing, unless each holds.
 */
export async function insertPosts(db: DbOrTrx, rows: ReadonlyArray<NewPostRow>, guard?: RawBuilder<boolean>, claimed?: ClaimRecord): Promise<void> {
  const condition = withClaimHolds(guard, claimed);
  if (condition) await sql`with written as (${postsInsertOf(db, rows)})${claimed ? sql`, ${claimed.cte}` : sql``} select ${condition} as unchanged`.execute(db);
  else await postsInsertOf(db, rows).execute();
}

/** `insertPosts` as a statement to run or to make part of another (`reserveQuotaWith`: the posts and their quota as one). */
export function postsInsertOf(db: DbOrTrx, rows: ReadonlyArray<NewPostRow>) {
  const request = JSON.stringify(currentRequestOrigin());
  return db.insertInto('posts').values(rows.map((row) => (row.status === 'publishing' ? { ...row, request_origin: request } : row)));
}

/**
 * Edits a scheduled post or a draft in place, only over the row as the edit read it (`read.row_version`, its `xmin` as
 * `findOwnPost` returned it): false when anything wrote it since, even where it is still `read.status`. The edit
 * writes back every column it planned, those it did not change as it read them, so over a write made meanwhile it
 * would undo it: a text edit's old time over a reschedule, a reschedule's old text over a text edit (README "Posts").
 */
export async function editPost(trx: Trx, read: { id: string; status: PostStatus; row_version: string }, content: PostUpdate): Promise<boolean> {
  const changed = await trx
    .updateTable('posts')
    .set({ ...content, updated_at: sql`now()` })
    .where('id', '=', read.id)
    .where('status', '=', read.status)
    .where('promoted_to_id', 'is', null)
    .where(sql`xmin`, '=', sql`${read.row_version}::xid`)
    .executeTakeFirst();
  return changed.numUpdatedRows > 0n;
}

/**
 * A new time is a new plan: the posts still `expected` (the post, or every part of its thread, which share one time)
 * move to it, and a failed attempt's retry no longer waits (`next_attempt_at`); `retry_count` stays (README "Posts").
 * Each move is a new `schedule_version`, even back to a time the post had: a hold prepared for the old plan can then
 * never claim the post, even at the same instant (`claimAllScheduledAt`).
 */
export async function moveScheduledTime(trx: Trx, postIds: readonly string[], expected: PostStatus, time: { scheduled_at: Date | null; timezone: string | null }): Promise<void> {
  await trx
    .updateTable('posts')
    .set({ ...time, next_attempt_at: null, schedule_version: sql`schedule_version + 1`, updated_at: sql`now()` })
    .where('id', 'in', postIds)
    .where('status', '=', expected)
    .execute();
}

/**
 * The holds of a lost run can no longer claim (`claimAllScheduledAt`, `claimThreadsScheduledAt`): each post, and every
 * part of each thread, still `scheduled` moves to a new `schedule_version` at the same time. Written by the reconciler
 * before it starts a workflow again for posts or threads whose workflow is not running (an operator's terminate
 * during the hold leaves the hold running in its worker, and only a heartbeat sent after it, up to 48 s later, would
 * stop it): the new run reads the row and holds at the new version, so the post goes to it, never to the hold nobody
 * listens to (README "Scheduled bursts"). One statement for a whole batch of them (a start over a memory-only Temporal
 * restarts every waiting post). `updated_at` stays: nothing the user sees changed.
 */
export async function disownHolds(db: Db, lost: { postIds: readonly string[]; threadIds: readonly string[] }): Promise<void> {
  // Only the arms with ids: an empty `thread_id = any('{}')` does not imply the partial thread index's `is not null`,
  // and the OR would then read the whole table.
  const arms = [
    ...(lost.postIds.length ? [sql<boolean>`id = any(${[...lost.postIds]}::uuid[])`] : []),
    ...(lost.threadIds.length ? [sql<boolean>`thread_id = any(${[...lost.threadIds]}::uuid[])`] : []),
  ];
  if (arms.length === 0) return;
  await db
    .updateTable('posts')
    .set({ schedule_version: sql`schedule_version + 1` })
    .where('status', '=', 'scheduled')
    .where((eb) => eb.or(arms))
    .execute();
}

/**
 * The draft points at the post it became, only over the draft as the promotion read it (`draft.row_version`, its
 * `xmin`, as `editPost` requires): false when it is no longer an unpromoted draft, or when anything wrote it since. The
 * new post carries what the promotion read, so a draft edit committed after that read, answered 200, would otherwise
 * be in neither the post nor a draft (README "Posts").
 */
export async function markPromoted(trx: Trx, draft: { id: string; row_version: string }, promotedToId: string): Promise<boolean> {
  const marked = await trx
    .updateTable('posts')
    .set({ promoted_to_id: promotedToId, updated_at: sql`now()` })
    .where('id', '=', draft.id)
    .where('status', '=', 'draft')
    .where('promoted_to_id', 'is', null)
    .where(sql`xmin`, '=', sql`${draft.row_version}::xid`)
    .executeTakeFirst();
  return marked.numUpdatedRows > 0n;
}

/**
 * A promotion that did not happen leaves its drafts as they were: a draft points at nothing again once what it became
 * is gone (a thread rolled back) or `failed` (a post the platform refused, kept as the record of the attempt). A draft
 * whose post is scheduled, publishing or published stays promoted.
 */
export async function unmarkFailedPromotion(db: Db, draftIds: readonly string[]): Promise<void> {
  await db
    .updateTable('posts')
    .set({ promoted_to_id: null })
    .where('id', 'in', draftIds)
    .where('status', '=', 'draft')
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('posts as p').select(sql`1`.as('one')).whereRef('p.id', '=', 'posts.promoted_to_id').where('p.status', '!=', 'failed'))),
    )
    .execute();
}

/**
 * A published post's link that could not be read at publish time, read later (threads, instagram): the answer (null
 * when the platform gives none) is stored and the link is no longer unread, so it is not asked for again.
 */
export async function storeResolvedUrl(db: Db, postId: string, url: string | null): Promise<void> {
  await db
    .updateTable('posts')
    .set({ platform_post_url: url, platform_post_url_unread: false })
    .where('id', '=', postId)
    .where('platform_post_url_unread', '=', true)
    .execute();
}

/** What one request created together: its fan-out group, else its thread, else the post alone. */
export type PostUnit = { groupId: string } | { threadId: string } | { postId: string };

export function unitOf(row: Pick<PostRow, 'id' | 'group_id' | 'thread_id'>): PostUnit {
  return row.group_id ? { groupId: row.group_id } : row.thread_id ? { threadId: row.thread_id } : { postId: row.id };
}

/** Hides or shows the user's posts of one unit (promoted drafts are gone: left as they are); returns their ids. */
export async function setHidden(db: Db, userId: string, unit: PostUnit, hidden: boolean): Promise<string[]> {
  const update = db
    .updateTable('posts')
    .set({ hidden, updated_at: sql`now()` })
    .where('user_id', '=', userId)
    .where((eb) => inUnit(eb, unit))
    .where('promoted_to_id', 'is', null);
  return (await update.returning('id').execute()).map((r) => r.id);
}

/** The user deletes a draft: its whole unit of unpromoted drafts goes (`draft` → `deleted`); returns their ids. */
export async function deleteDrafts(db: Db, userId: string, unit: PostUnit): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const update = trx
      .updateTable('posts')
      .set({ status: 'deleted', updated_at: sql`now()` })
      .where('user_id', '=', userId)
      .where('status', '=', 'draft')
      .where('promoted_to_id', 'is', null)
      .where((eb) => inUnit(eb, unit));
    const deleted = (await update.returning('id').execute()).map((r) => r.id);
    await recordPostEvents(trx, 'post.deleted', deleted);
    return deleted;
  });
}

function inUnit(eb: ExpressionBuilder<Database, 'posts'>, unit: PostUnit) {
  if ('groupId' in unit) return eb('group_id', '=', unit.groupId);
  if ('threadId' in unit) return eb('thread_id', '=', unit.threadId);
  return eb('id', '=', unit.postId);
}

/**
 * Posts whose workflow Temporal refused to start as invalid at their request (`startAndAwait`): `scheduled` or
 * `publishing` → `failed` with the sentence, their first comment not sent, every reservation refunded, `post.failed`
 * written. No attempt was made, so `retry_count` stays. Returns the posts it failed.
 */
export async function failUnstartedPosts(db: Db, postIds: readonly string[], sentence: string): Promise<string[]> {
  if (postIds.length === 0) return [];
  return failUnstarted(db, (eb) => eb('id', 'in', [...postIds]), sentence, (trx, ids) => recordPostEvents(trx, 'post.failed', ids));
}

/**
 * The write behind `failUnstartedPosts` and threads' `failUnstartedThread`: the `scheduled` or `publishing` rows
 * `which` selects → `failed` with the sentence and their first comments not sent, refunded, and `recordFailed` given
 * the ids, in one transaction; each caller names its rows and its event.
 */
export async function failUnstarted(
  db: Db,
  which: (eb: ExpressionBuilder<Database, 'posts'>) => Expression<SqlBool>,
  sentence: string,
  recordFailed: (trx: Trx, ids: string[]) => Promise<unknown>,
): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const failed = await trx
      .updateTable('posts')
      .set({ status: 'failed', error_message: sentence, ...failPendingCommentColumns(firstCommentNotSent.notPublished), updated_at: sql`now()` })
      .where(which)
      .where('status', 'in', ['scheduled', 'publishing'])
      .returning('id')
      .execute();
    const ids = failed.map((row) => row.id);
    if (ids.length > 0) {
      await refundQuota(trx, ids);
      await recordFailed(trx, ids);
    }
    return ids;
  });
}
