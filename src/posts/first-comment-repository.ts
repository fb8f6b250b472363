import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { insertOwnComment, ownCommentRow, type OwnCommentInput } from '../comments/repository';
import { eventsInsertOf } from '../events/outbox';
import { currentRequestOrigin } from '../events/request-origin';
import type { Database, Db } from '../db';
import { namedStatements } from '../db/named-statements';
import { refundQuota, spendQuota, spendReservedOf } from '../quota/quota';
import { earlierAttemptOpen, publishingAccountColumns, rowVersion } from './attempt-marks';
import { unchangedSinceMark, viewOfMarked } from './attempt-outcomes';
import { firstCommentCharges } from './first-comment-not-sent';
import { recordPostEvents } from './post-events';

/**
 * A published post's first comment (`first_comment_status`): its attempt's mark (migration 0053), its outcome
 * (`pending` → `posted` | `failed`) and the user's retry (`failed` → `pending`), each one write conditional on the
 * status it expects, its charges settled and its event written with it.
 */

type Trx = Transaction<Database>;

/**
 * Marks a first comment's platform call as begun (migration 0053) and returns the row when its comment is `pending`
 * under a published post, with whether an earlier call never reported back. One statement, as `beginPublishAttempt`.
 */
export async function beginFirstCommentAttempt(db: Db, postId: string) {
  return db
    .with('marked', (qb) =>
      qb
        .updateTable('posts')
        .set({ first_comment_attempt_started_at: sql`now()` })
        .where('id', '=', postId)
        .where('status', '=', 'published')
        .where('first_comment_status', '=', 'pending')
        .where('first_comment_text', 'is not', null)
        .where('platform_post_id', 'is not', null)
        .returningAll()
        .returning([earlierAttemptOpen('first_comment_attempt_started_at'), rowVersion]),
    )
    .selectFrom('marked')
    .leftJoin('accounts', 'accounts.id', 'marked.account_id')
    .selectAll('marked')
    .select(publishingAccountColumns)
    .select(['accounts.username as account_username', 'accounts.display_name as account_display_name', 'accounts.platform_account_id as account_platform_account_id'])
    .executeTakeFirst();
}

/** A first comment's attempt as `beginFirstCommentAttempt` marked it: the row, its version and its account's columns. */
export type MarkedFirstComment = NonNullable<Awaited<ReturnType<typeof beginFirstCommentAttempt>>>;

/**
 * `pending` → `posted` (its charges spent) or `failed` with the sentence (its charges refunded), with its event. A
 * comment posted, given with the row its attempt marked, is recorded in one statement, no BEGIN or COMMIT
 * (`recordMarkedFirstCommentPosted`), when nothing wrote the row since the mark, its account is as the mark read it
 * and the platform's comment is not stored yet; anything else in the transaction below.
 */
export async function recordFirstCommentOutcome(
  db: Db,
  postId: string,
  outcome: { ok: true; comment: OwnCommentInput; marked?: MarkedFirstComment } | { ok: false; message: string },
): Promise<void> {
  if (outcome.ok && outcome.marked && (await recordMarkedFirstCommentPosted(db, outcome.comment, outcome.marked))) return;
  if (!outcome.ok) {
    await failPendingFirstComment(db, postId, outcome.message);
    return;
  }
  await db.transaction().execute(async (trx) => {
    // The posted comment is stored with the post's comments in the same transaction (`own: true`).
    const stored = await insertOwnComment(trx, outcome.comment);
    const settled = await trx
      .updateTable('posts')
      .set({ first_comment_status: 'posted', first_comment_platform_id: outcome.comment.platformCommentId, first_comment_comment_id: stored.id, first_comment_error: null, updated_at: sql`now()` })
      .where('id', '=', postId)
      .where('first_comment_status', '=', 'pending')
      .returning('id')
      .execute();
    await spendQuota(trx, [postId], firstCommentCharges);
    await recordPostEvents(trx, 'first_comment.posted', settled.map((r) => r.id));
  });
}

/**
 * `pending` → `failed` with the sentence, its charges refunded and its `first_comment.failed` event written. With
 * `staleForMs`, only a comment whose attempt began (or, never begun, whose retry was claimed) longer ago than that by
 * the database's clock: an attempt nobody will finish, its process gone mid-call or before it called. With
 * `postGone`, only under a post no longer live (`deleted`, `failed`): a comment whose attempt found nothing to send it
 * under. False when the comment was not such a `pending` one (still in flight, or settled).
 */
export async function failPendingFirstComment(db: Db, postId: string, message: string, options: { staleForMs?: number; postGone?: boolean } = {}): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    let fail = trx
      .updateTable('posts')
      .set({ first_comment_status: 'failed', first_comment_error: message, updated_at: sql`now()` })
      .where('id', '=', postId)
      .where('first_comment_status', '=', 'pending');
    if (options.postGone) fail = fail.where('status', 'in', ['deleted', 'failed']);
    if (options.staleForMs !== undefined) {
      fail = fail.where(sql<boolean>`coalesce(first_comment_attempt_started_at, updated_at) < now() - make_interval(secs => ${options.staleForMs / 1000})`);
    }
    const settled = await fail.returning('id').execute();
    if (settled.length === 0) return false;
    await refundQuota(trx, [postId], firstCommentCharges);
    await recordPostEvents(trx, 'first_comment.failed', settled.map((r) => r.id));
    return true;
  });
}

/** One text: a first comment posted (`recordMarkedFirstCommentPosted`). */
const firstCommentStatements = namedStatements(1);

/**
 * The one-statement path of `recordFirstCommentOutcome` for a comment posted: the comment stored (a new row, with an
 * id made here), the post `posted` only if nothing wrote it since its mark and its account's state is the one the
 * mark read, its charges spent, and its `first_comment.posted` event, the marked row as the API shows it once posted.
 * False when the post did not change (the transaction then decides, and finds the comment this stored, if it did).
 */
async function recordMarkedFirstCommentPosted(db: Db, comment: OwnCommentInput, marked: MarkedFirstComment): Promise<boolean> {
  const commentId = randomUUID();
  const posted = { first_comment_status: 'posted' as const, first_comment_platform_id: comment.platformCommentId, first_comment_comment_id: commentId, first_comment_error: null };
  const event = {
    key: marked.id,
    userId: marked.user_id,
    type: 'first_comment.posted' as const,
    data: viewOfMarked(marked, posted),
    request: currentRequestOrigin() ?? marked.request_origin,
  };
  const store = db
    .insertInto('comments')
    .values({ ...ownCommentRow(comment), id: commentId })
    .onConflict((oc) => oc.columns(['post_id', 'platform_comment_id']).doNothing())
    .returning('id');
  const rows = await firstCommentStatements.execute(
    db,
    sql<{ id: string }>`
    with stored as (${store}),
    settled as (
      update posts set first_comment_status = 'posted', first_comment_platform_id = ${comment.platformCommentId}, first_comment_comment_id = ${commentId},
        first_comment_error = null, updated_at = now()
      where id = ${marked.id} and first_comment_status = 'pending' and exists (select 1 from stored)
        and ${unchangedSinceMark(sql`${marked.row_version}::xid`, sql`${marked.account_inactive_reason}::text`)}
      returning id),
    spent as (${spendReservedOf(sql`select id from settled`, firstCommentCharges)}),
    evented as (${eventsInsertOf([event], sql`select id::text from settled`)})
    select id from settled`,
  );
  return rows.length > 0;
}

/** A user's retry: `failed` → `pending`, its attempt mark cleared. False when another retry claimed it first. */
export async function reopenFirstComment(trx: Trx, postId: string): Promise<boolean> {
  const claimed = await trx
    .updateTable('posts')
    .set({
      first_comment_status: 'pending',
      first_comment_error: null,
      first_comment_attempt_started_at: null,
      request_origin: JSON.stringify(currentRequestOrigin()),
      updated_at: sql`now()`,
    })
    .where('id', '=', postId)
    .where('first_comment_status', '=', 'failed')
    .executeTakeFirst();
  return claimed.numUpdatedRows > 0n;
}
