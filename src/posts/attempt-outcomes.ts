import { sql, type RawBuilder } from 'kysely';
import type { AccountInactiveReason } from '../accounts/lifecycle';
import { eventsInsertOf } from '../events/outbox';
import { currentRequestOrigin } from '../events/request-origin';
import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import type { PostLink } from '../platforms/types';
import { namedStatements, rowsOf } from '../db/named-statements';
import { refundQuota, spendReservedOf } from '../quota/quota';
import type { MarkedPost } from './attempt-marks';
import { failPendingCommentColumns, firstCommentNotSent } from './first-comment-not-sent';
import { recordPostEvents, recordPostEventsOf } from './post-events';
import { urlUnreadOf } from './post-link';
import type { PostView } from './post-view';
import { toViewOf, type PostViewRow } from './view-queries';

/**
 * How an attempt to publish ends, written by the worker: `publishing` → `published` (its reservations spent),
 * `failed` or back to waiting for a retry, `deleted` when its account's credential was refused, or `scheduled` again
 * while the credential is renewed. An outcome given with the row its attempt marked (`attempt-marks.ts`) is written in
 * one statement when nothing wrote the row since; anything else in a transaction.
 */

/** The charges a published post spends (a first comment's are settled by its own outcome). */
const publishedCharges = ['post', 'scheduled', 'x_link'] as const;

/** The platform answered with a refusal: nothing is live, so the next attempt need not look first. */
export async function clearPublishAttempt(db: Db, postId: string): Promise<void> {
  await db.updateTable('posts').set({ publish_attempt_started_at: null }).where('id', '=', postId).execute();
}

/** The platform took it: `publishing` → `published` and its reservations spent, in one transaction. */
export async function recordPublished(db: Db, postId: string, outcome: PublishedOutcome): Promise<void> {
  await recordPublishedAll(db, [{ postId, ...outcome }]);
}

interface PublishedOutcome extends PostLink {
  platformPostId: string;
  publishedAt: number;
}

/**
 * `recordPublished` of many posts (an immediate fan-out's first attempts): one statement whatever their number, and
 * their `post.published` events, in one transaction. Each row changes only if it is still `publishing`, and only the
 * rows that changed spend their reservations and get an event.
 *
 * An outcome given with the row its attempt `marked` is recorded in one statement, no BEGIN or COMMIT: its event is
 * the view of that row as published (`toPostView`, built before the write) and is inserted by the same statement,
 * which changes the row only if nothing else wrote it since the mark (its `xmin`) and its account's state is still
 * the one the view shows. Any other outcome, and one whose row moved on meanwhile, takes the transaction below
 * (whose own conditions then decide: a row already `published` changes nothing). Returns the views of the posts
 * recorded in one statement: each is the row as a read would show it once the statement committed.
 */
export async function recordPublishedAll(db: Db, outcomes: ReadonlyArray<OutcomeToRecord>): Promise<PostView[]> {
  if (outcomes.length === 0) return [];
  const marked = outcomes.filter((o): o is typeof o & { marked: MarkedPost } => o.marked !== undefined);
  const recorded = await recordMarkedPublished(db, marked);
  // What is left is recorded whatever happened to its row since a mark: the update's own conditions decide.
  const rest = outcomes.filter((o) => !recorded.has(o.postId)).map(({ marked: _mark, ...outcome }) => outcome);
  if (rest.length > 0) {
    await db.transaction().execute(async (trx) => {
      // The statement returns the rows as the view reads them, so the events need no read of their own.
      const published = await sql<PostViewRow>`
        with published as (${publishedUpdateOf(rest)}), spent as (${spendReservedOf(sql`select id from published`, publishedCharges)})
        select published.*, accounts.inactive_reason as account_inactive_reason
          from published left join accounts on accounts.id = published.account_id order by published.id`.execute(trx);
      await recordPostEventsOf(trx, 'post.published', published.rows);
    });
  }
  return [...recorded.values()];
}

export type OutcomeToRecord = PublishedOutcome & { postId: string; marked?: MarkedPost };

/**
 * The `publishing` → `published` update of `recordPublishedAll`'s two paths, returning the rows it changed (a CTE of
 * their statements). An outcome given with its `marked` row changes it only if nothing wrote it since the mark (its
 * `xmin`) and its account's state is still the one the mark read; any other, whenever it is still `publishing`.
 */
function publishedUpdateOf(outcomes: ReadonlyArray<OutcomeToRecord>) {
  return sql`
    update posts set status = 'published', platform_post_id = outcome.platform_post_id, platform_post_url = outcome.url,
      platform_post_url_unread = outcome.url_unread, published_at = outcome.published_at, error_message = null, updated_at = now()
    from ${rowsOf('outcome', {
      id: { values: outcomes.map((o) => o.postId), type: 'uuid' },
      platform_post_id: { values: outcomes.map((o) => o.platformPostId), type: 'text' },
      url: { values: outcomes.map((o) => o.url), type: 'text' },
      url_unread: { values: outcomes.map(urlUnreadOf), type: 'boolean' },
      published_at: { values: outcomes.map((o) => new Date(o.publishedAt).toISOString()), type: 'timestamptz' },
      row_version: { values: outcomes.map((o) => o.marked?.row_version ?? null), type: 'xid' },
      account_inactive_reason: { values: outcomes.map((o) => o.marked?.account_inactive_reason ?? null), type: 'text' },
    })}
    where posts.id = outcome.id and posts.status = 'publishing'
      and (outcome.row_version is null or ${unchangedSinceMark(sql.ref('outcome.row_version'), sql.ref('outcome.account_inactive_reason'))})
    returning posts.*`;
}

/**
 * A condition on a marked row (`posts`) in a recording's update: nothing wrote it since its mark (its `xmin` is still
 * `version`, the mark's `row_version`) and its account's state is still `inactiveReason`, the one the mark read. A
 * view built from the marked row (`viewOfMarked`) is then the row as a read would show it after the update.
 */
export function unchangedSinceMark(version: RawBuilder<unknown>, inactiveReason: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`(posts.xmin = ${version}
    and (select accounts.inactive_reason from accounts where accounts.id = posts.account_id) is not distinct from ${inactiveReason})`;
}

/** A marked row (with the account state its mark read) as the API shows it once `changes` are written, nothing else. */
export function viewOfMarked(marked: PostViewRow, changes: Partial<PostRow>): PostView {
  return toViewOf({ ...marked, ...changes });
}

/** Three texts: one post, any number of them (`rowsOf`), a thread's parts (`recordMarkedThreadPublished`). */
const recordingStatements = namedStatements(3);

/** A marked row as the API shows it once its outcome is recorded `published` (nothing wrote it since: `publishedUpdateOf`). */
export function publishedViewOf({ marked, ...outcome }: OutcomeToRecord & { marked: MarkedPost }): PostView {
  return viewOfMarked(marked, {
    status: 'published',
    platform_post_id: outcome.platformPostId,
    platform_post_url: outcome.url,
    platform_post_url_unread: urlUnreadOf(outcome),
    published_at: new Date(outcome.publishedAt),
    error_message: null,
  });
}

/**
 * Marked rows recorded `published` in one statement, no BEGIN or COMMIT (`publishedUpdateOf`, their reservations spent),
 * with the events `eventsInsert` writes: an `eventsInsertOf` whose condition reads the ids the update changed from
 * `published`. Returns those ids: a row written since its mark is not among them.
 */
export async function publishMarkedRows(db: Db, outcomes: ReadonlyArray<OutcomeToRecord & { marked: MarkedPost }>, eventsInsert: RawBuilder<unknown>): Promise<string[]> {
  const rows = await recordingStatements.execute(
    db,
    sql<{ id: string }>`
    with published as (${publishedUpdateOf(outcomes)}), spent as (${spendReservedOf(sql`select id from published`, publishedCharges)}),
    evented as (${eventsInsert})
    select id from published`,
  );
  return rows.map((row) => row.id);
}

/**
 * The one-statement path of `recordPublishedAll`: the posts it recorded, each with its view as published (its event's
 * data, which is the row as a read would show it now: nothing wrote the row since its mark, see `publishedUpdateOf`).
 */
async function recordMarkedPublished(db: Db, outcomes: ReadonlyArray<OutcomeToRecord & { marked: MarkedPost }>): Promise<Map<string, PostView>> {
  if (outcomes.length === 0) return new Map();
  const request = currentRequestOrigin();
  const events = outcomes.map((outcome) => ({
    key: outcome.postId,
    userId: outcome.marked.user_id,
    type: 'post.published' as const,
    data: publishedViewOf(outcome),
    request: request ?? outcome.marked.request_origin,
  }));
  const recorded = await publishMarkedRows(db, outcomes, eventsInsertOf(events, sql`select id::text from published`));
  const views = new Map(events.map((event) => [event.key, event.data]));
  return new Map(recorded.map((id) => [id, views.get(id)!]));
}

/**
 * Where a post (or a thread, by its first part) stands in its retries, as its row keeps them: the attempts that failed
 * (`retry_count`) and the earliest next one (`next_attempt_at`, ms on the workflow's clock; 0 when none waits). A
 * workflow takes it from its claims, so one started again after its run was lost neither sends before the wait is
 * over nor gets its retries back.
 */
export interface RetryState {
  failures: number;
  notBefore: number;
}

export function retryStateOf(row: Pick<PostRow, 'retry_count' | 'next_attempt_at'>): RetryState {
  return { failures: row.retry_count, notBefore: row.next_attempt_at?.getTime() ?? 0 };
}

/**
 * When a waiting (`scheduled`) row is due, ms: its time and, after a failed attempt, its retry's (`next_attempt_at`);
 * null without a time. The claim's statement says the same in SQL (`markAttemptsQuery`'s `dueBy`).
 */
export function waitingUntil(row: Pick<PostRow, 'scheduled_at' | 'next_attempt_at'>): number | null {
  return row.scheduled_at === null ? null : Math.max(row.scheduled_at.getTime(), row.next_attempt_at?.getTime() ?? 0);
}

/**
 * A failed attempt of a `publishing` post: `retry_count` goes up. Final: `failed` with the sentence, its first comment
 * marked as not sent, every reservation refunded. Otherwise the post waits for its retry as `requeue`, until `retryAt`
 * (the workflow's clock; absent from runs older than the column, which keep it themselves).
 */
export async function recordFailedAttempt(db: Db, postId: string, input: { message: string; final: boolean; requeue: 'scheduled' | 'publishing'; retryAt?: number }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('posts')
      .set({
        status: input.final ? 'failed' : input.requeue,
        error_message: input.final ? input.message : null,
        retry_count: sql`retry_count + 1`,
        next_attempt_at: !input.final && input.retryAt !== undefined ? new Date(input.retryAt) : null,
        // A retry keeps the attempt's mark as the attempt left it: open only when its call may have sent (a server
        // error to a create, a request not built after an earlier call that never reported), so the retry looks first.
        ...(input.final ? { publish_attempt_started_at: null } : {}),
        ...(input.final ? failPendingCommentColumns(firstCommentNotSent.notPublished) : {}),
        updated_at: sql`now()`,
      })
      .where('id', '=', postId)
      .where('status', '=', 'publishing')
      .executeTakeFirst();
    if (input.final && updated.numUpdatedRows > 0n) {
      await refundQuota(trx, [postId]);
      await recordPostEvents(trx, 'post.failed', [postId]);
    }
  });
}

/**
 * A claimed scheduled post whose account can no longer send (its credential refused, or the account found switched
 * off at the attempt): `publishing` → `deleted` with the reason, its first comment `failed`, refunded. True when it
 * changed the row.
 */
export async function cancelClaimed(db: Db, postId: string, reason: AccountInactiveReason): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const cancelled = await trx
      .updateTable('posts')
      .set({ status: 'deleted', error_message: reason, ...failPendingCommentColumns(firstCommentNotSent.cancelled), updated_at: sql`now()` })
      .where('id', '=', postId)
      .where('status', '=', 'publishing')
      .executeTakeFirst();
    if (cancelled.numUpdatedRows === 0n) return false;
    await refundQuota(trx, [postId]);
    await recordPostEvents(trx, 'post.cancelled', [postId]);
    return true;
  });
}

/**
 * How long past its time a scheduled post waits for its account's credential to be renewed without spending a retry
 * (README "Credentials"): a renewal failing that long (the token endpoint down, Herald's app credentials wrong) is
 * not about to come back, and the user learns why the post did not go out rather than finding it waiting (with
 * `renewalOverdueMessage`, `src/accounts/credential-sentences.ts`).
 */
export const CREDENTIAL_WAIT_LIMIT_MS = 60 * 60_000;

/**
 * `publishing` → `scheduled` without spending a retry: the account's credential is being renewed (issue 16); it is
 * looked at again at `retryAt` (absent from runs older than `next_attempt_at`, which keep the wait themselves: the
 * row says "now", never null, so the post does not take a slot of the spacing rule again, migration 0230). Only
 * while the post's time is less than `CREDENTIAL_WAIT_LIMIT_MS` before `now` (the workflow's clock; absent from runs
 * older than the limit): false when the wait is over, the row unchanged, its refusal then a failed attempt.
 * The attempt's mark stays as the attempt left it (`sendMarked` decides, as for `recordFailedAttempt`): open only when
 * the renewal stopped the look an earlier call's open mark asked for, a call that may have sent, so the attempt
 * after the renewal still looks first (it was cleared: X then refused the resend as a duplicate and the live post
 * was failed; a platform that takes the same text twice could publish it twice).
 */
export async function requeueAwaitingCredential(db: Db, postId: string, options: { retryAt?: number; now?: number } = {}): Promise<boolean> {
  const { retryAt, now } = options;
  let requeue = db
    .updateTable('posts')
    .set({ status: 'scheduled', next_attempt_at: retryAt === undefined ? sql`now()` : new Date(retryAt), updated_at: sql`now()` })
    .where('id', '=', postId)
    .where('status', '=', 'publishing');
  if (now !== undefined) requeue = requeue.where('scheduled_at', '>', new Date(now - CREDENTIAL_WAIT_LIMIT_MS));
  const { numUpdatedRows } = await requeue.executeTakeFirst();
  return numUpdatedRows > 0n;
}
