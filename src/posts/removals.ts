import { sql, type Transaction } from 'kysely';
import type { AccountInactiveReason } from '../accounts/lifecycle';
import type { Database, Db } from '../db';
import { idsOrNone } from '../db/uuid';
import { refundQuota } from '../quota/quota';
import { failPendingCommentColumns, firstCommentCharges, firstCommentNotSent } from './first-comment-not-sent';
import { recordPostEvents } from './post-events';
import { mayBeLiveAccountEnded } from './publish-outcome';
import { failThreadsMayBeLive } from '../threads/account-end';

/**
 * The writes that take a post out of the queue or the listing of live posts, each one conditional write in one
 * transaction with its refund and its event (the rest of a post's lifecycle: `repository.ts`'s map): the user's
 * delete of a failed or published post (`markDeleted`), the cancellation of scheduled posts by the user or by their
 * account's end (`cancelScheduled`), and, at an account's end, the failure of one that may be live (`failMayBeLive`).
 */

/**
 * A failed post, or a published one the platform deleted, is marked `deleted` (the record stays). A first comment
 * still `pending` under it is `failed` in the same update and its charges refunded (quota rule 5: it will never go
 * out); one in flight meanwhile lands under a deleted post and is not counted.
 */
export async function markDeleted(db: Db, postId: string, expected: 'failed' | 'published'): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const deleted = await trx
      .updateTable('posts')
      .set({ status: 'deleted', ...failPendingCommentColumns(firstCommentNotSent.noLongerPublished), updated_at: sql`now()` })
      .where('id', '=', postId)
      .where('status', '=', expected)
      .returning('id')
      .execute();
    const ids = deleted.map((r) => r.id);
    // Only reservations move to refunded: a comment posted keeps its spent charge.
    await refundQuota(trx, ids, firstCommentCharges);
    await recordPostEvents(trx, 'post.deleted', ids);
  });
}

/**
 * Cancels scheduled posts (`scheduled` → `deleted`, `error_message` = the reason, null when the user deleted them),
 * their first comments `failed` with a sentence, every reservation refunded, in one transaction. A post already publishing finishes: nothing live is ever marked
 * deleted. With `unlessMayBeLive`, nothing of `postIds` when any of them waits with an attempt's mark open (a retry
 * after a server error to a create that may have landed, a look a renewal stopped): that post may be live. An
 * account's end (a `reason`) fails such a post instead (`failMayBeLive`), and such a thread whole
 * (`failThreadsMayBeLive`). Returns the ids settled, failed ones first
 * (none when repeated).
 */
export async function cancelScheduled(
  db: Db,
  target: { postIds?: readonly string[]; accountId?: string; reason: AccountInactiveReason | null; unlessMayBeLive?: boolean },
): Promise<string[]> {
  if (!target.postIds && !target.accountId) throw new Error('cancelScheduled needs postIds or accountId');
  return db.transaction().execute(async (trx) => {
    const ended = target.reason !== null && !target.unlessMayBeLive ? { ...target, reason: target.reason } : null;
    const failed = ended ? [...(await failMayBeLive(trx, ended)), ...(await failThreadsMayBeLive(trx, ended))] : [];
    let update = trx
      .updateTable('posts')
      .set({ status: 'deleted', error_message: target.reason, ...failPendingCommentColumns(firstCommentNotSent.cancelled), updated_at: sql`now()` })
      .where('status', '=', 'scheduled');
    const postIds = idsOrNone(target.postIds ?? []);
    if (target.postIds) update = update.where('id', 'in', postIds);
    if (target.accountId) update = update.where('account_id', '=', target.accountId);
    // The row's own mark is read again on a row written meanwhile (a requeue); the others' as the statement began.
    if (target.unlessMayBeLive) update = update.where('publish_attempt_started_at', 'is', null).where(sql<boolean>`not ${mayBeLive(trx, postIds)}`);
    const cancelled = (await update.returning('id').execute()).map((r) => r.id);
    await refundQuota(trx, cancelled);
    await recordPostEvents(trx, target.reason === null ? 'post.deleted' : 'post.cancelled', cancelled);
    return [...failed, ...cancelled];
  });
}

/**
 * The scheduled posts an account's end (`reason`) meets with an attempt that never reported back (their mark open: a
 * server error to a create that may have landed, a look a renewal stopped): they may be live, and the attempt that
 * would have looked will not come, so each is `failed` with `mayBeLiveAccountEnded`'s sentence (not `deleted` as
 * cancelled, which says it never went out), its first comment failed, refunded, `post.failed`. An account's end
 * cannot be refused as a DELETE is. Thread parts are left to their thread's rules (all or nothing:
 * `failThreadsMayBeLive`). Returns their ids.
 */
async function failMayBeLive(trx: Transaction<Database>, target: { postIds?: readonly string[]; accountId?: string; reason: AccountInactiveReason }): Promise<string[]> {
  let update = trx
    .updateTable('posts')
    .set({
      status: 'failed',
      error_message: mayBeLiveAccountEnded(target.reason),
      publish_attempt_started_at: null,
      next_attempt_at: null,
      ...failPendingCommentColumns(firstCommentNotSent.notPublished),
      updated_at: sql`now()`,
    })
    .where('status', '=', 'scheduled')
    .where('publish_attempt_started_at', 'is not', null)
    .where('thread_id', 'is', null);
  if (target.postIds) update = update.where('id', 'in', idsOrNone(target.postIds));
  if (target.accountId) update = update.where('account_id', '=', target.accountId);
  const failed = (await update.returning('id').execute()).map((r) => r.id);
  await refundQuota(trx, failed);
  await recordPostEvents(trx, 'post.failed', failed);
  return failed;
}

/**
 * Whether any of `postIds` waits with an attempt that never reported back (`publish_attempt_started_at` set while
 * `scheduled`): it may be on the platform already, so it is not cancelled as never published (`cancelScheduled`).
 */
function mayBeLive(db: Db | Transaction<Database>, postIds: readonly string[]) {
  return sql<boolean>`exists (${db
    .selectFrom('posts')
    .select(sql.lit(1).as('one'))
    .where('id', 'in', postIds)
    .where('status', '=', 'scheduled')
    .where('publish_attempt_started_at', 'is not', null)})`;
}

/** `mayBeLive` read on its own: the DELETE's refusal before it cancels (`deletePost`). */
export async function anyMayBeLive(db: Db, postIds: readonly string[]): Promise<boolean> {
  if (postIds.length === 0) return false;
  const { live } = await db.selectNoFrom(mayBeLive(db, postIds).as('live')).executeTakeFirstOrThrow();
  return live;
}
