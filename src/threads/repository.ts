import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import { eventsInsertOf } from '../events/outbox';
import { currentRequestOrigin } from '../events/request-origin';
import { loadPostViews } from '../posts/view-queries';
import { CREDENTIAL_WAIT_LIMIT_MS, publishedViewOf, publishMarkedRows, type OutcomeToRecord } from '../posts/attempt-outcomes';
import { urlUnreadOf } from '../posts/post-link';
import { atHeldVersion, heldVersions, type MarkedPost } from '../posts/attempt-marks';
import { refundQuota, spendQuota } from '../quota/quota';
import { recordPostEvents } from '../posts/post-events';
import { failPendingCommentColumns, firstCommentNotSent } from '../posts/first-comment-not-sent';
import { failUnstarted } from '../posts/repository';
import type { AccountInactiveReason } from '../accounts/lifecycle';
import { accountVia, loadThreadParts, rollbackSupportedOf, type ThreadPartRow } from './reads';
import { recordThreadEvent } from './thread-events';

/**
 * The thread transitions of the `posts` table (one row per part, `thread_id` + `thread_order`), as free functions
 * taking `db` or a transaction first. A thread changes status as a whole; every write is conditional on the status
 * its parts are expected in, and the quota it settles is settled through `src/quota` in the same transaction, as is
 * the event it reports (`thread.published`, `thread.failed`: `{ thread_id, posts }`, the parts as the API shows them;
 * `thread-events.ts`). The reads are in `reads.ts`; an account's end met by a part that may be live, in `account-end.ts`.
 */

type Trx = Transaction<Database>;

/** A scheduled thread that is due: every part `scheduled` → `publishing` (the caller holds the parts' locks). */
export async function claimScheduledThread(trx: Trx, threadId: string): Promise<void> {
  await trx.updateTable('posts').set({ status: 'publishing', request_origin: null, updated_at: sql`now()` }).where('thread_id', '=', threadId).where('status', '=', 'scheduled').execute();
}

/**
 * The held threads of one instant (`publishThreadWhenDue`): every part of each named thread still `scheduled` at
 * exactly `at` and at the `schedule_version` its hold was given (`versions`, by thread id: a post's rule,
 * `atHeldVersion`; migration 0252) becomes `publishing`, in one statement, so a hold abandoned by a reschedule away
 * and back to `at` never takes it; returns the rows taken, by thread and part. The parts are locked first in (thread,
 * part) order, as a cancellation locks them (`loadThreadParts`), so the two never deadlock, and a thread is taken
 * whole or not at all (its parts share their status, time and version).
 */
export async function claimThreadsScheduledAt(db: Db, threadIds: readonly string[], at: Date, versions: Readonly<Record<string, number>>): Promise<ThreadPartRow[]> {
  const atVersion = atHeldVersion(heldVersions(versions), 'thread_id');
  return db
    .updateTable('posts')
    .set({ status: 'publishing', request_origin: null, updated_at: sql`now()` })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('posts')
        .select('id')
        .where('thread_id', 'in', [...threadIds])
        .where('status', '=', 'scheduled')
        .where('scheduled_at', '=', at)
        .where(atVersion)
        .orderBy('thread_id')
        .orderBy('thread_order')
        .forUpdate(),
    )
    .where('status', '=', 'scheduled')
    .where('scheduled_at', '=', at)
    .where(atVersion)
    .returningAll()
    .returning(accountVia)
    .execute();
}

/**
 * Every part went out: `publishing` → `published` with their ids, and their reservations spent (first comment aside).
 * Parts given with the row of their attempt's mark and their version since (`marked`, as `recordPublishedAll` takes
 * them: the activity that sent them all) are recorded in one statement with the `thread.published` event
 * (`recordMarkedThreadPublished`); what that leaves, or parts given without, in the transaction below, which reads
 * what the event shows.
 */
export async function recordThreadPublished(db: Db, parts: ReadonlyArray<OutcomeToRecord>): Promise<void> {
  const marked = parts.every((part): part is typeof part & { marked: MarkedPost } => part.marked !== undefined);
  const recorded = marked ? new Set(await recordMarkedThreadPublished(db, parts)) : new Set<string>();
  if (recorded.size === parts.length) return;
  await db.transaction().execute(async (trx) => {
    const rest = parts.filter((part) => !recorded.has(part.postId));
    const { rows } = await sql<{ id: string; thread_id: string | null; user_id: string; request_origin: PostRow['request_origin'] }>`
      update posts set status = 'published', platform_post_id = part.platform_post_id, platform_post_url = part.url,
        platform_post_url_unread = part.url_unread, published_at = part.published_at, error_message = null, updated_at = now()
      from unnest(${rest.map((p) => p.postId)}::uuid[], ${rest.map((p) => p.platformPostId)}::text[], ${rest.map((p) => p.url)}::text[],
          ${rest.map(urlUnreadOf)}::boolean[], ${rest.map((p) => new Date(p.publishedAt).toISOString())}::timestamptz[])
        as part(id, platform_post_id, url, url_unread, published_at)
      where posts.id = part.id and posts.status = 'publishing'
      returning posts.id, posts.thread_id, posts.user_id, posts.request_origin`.execute(trx);
    await spendQuota(trx, rows.map((r) => r.id), ['post', 'scheduled', 'x_link']);
    const changed = rows[0];
    // `parts` are every part of the thread (the workflow records a thread only when all went out).
    if (changed?.thread_id) await recordThreadEvent(trx, 'thread.published', changed.thread_id, { owner: changed, partIds: parts.map((p) => p.postId) });
  });
}

/**
 * The parts as their marks returned them, recorded `published` in one statement (`publishMarkedRows`: a part written
 * since the version given is left to the transaction), with the thread's event, written only when every part was: it
 * shows each as published (`publishedViewOf`). Returns the parts it recorded.
 */
async function recordMarkedThreadPublished(db: Db, parts: ReadonlyArray<OutcomeToRecord & { marked: MarkedPost }>): Promise<string[]> {
  const first = parts[0]!.marked;
  const posts = parts.map(publishedViewOf).sort((a, b) => (a.thread_order ?? 0) - (b.thread_order ?? 0));
  const event = { key: first.thread_id!, userId: first.user_id, type: 'thread.published' as const, data: { thread_id: first.thread_id!, posts }, request: currentRequestOrigin() ?? first.request_origin };
  return publishMarkedRows(db, parts, eventsInsertOf([event], sql`select ${first.thread_id!}::text where (select count(*) from published) = ${parts.length}`));
}

/**
 * An immediate thread that failed keeps no rows: every reservation refunded, then its `publishing` parts removed.
 * Its `thread.failed` event shows the parts as they were, `failed` with the sentence (no row is left to read later).
 */
export async function discardThread(db: Db, threadId: string, partIds: readonly string[], failure: { message: string; rollback?: unknown } | null = null): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await loadThreadParts(trx, threadId, { lock: true });
    const removing = (await loadPostViews(trx, partIds)).filter((view) => view.status === 'publishing');
    if (failure !== null && removing.length > 0) {
      const posts = removing.map((view) => ({ ...view, status: 'failed' as const, error_message: failure.message }));
      await recordThreadEvent(trx, 'thread.failed', threadId, { posts, thread_rollback: failure.rollback });
    }
    await refundQuota(trx, partIds);
    await trx.deleteFrom('posts').where('thread_id', '=', threadId).where('status', '=', 'publishing').execute();
  });
}

/**
 * A scheduled thread's `publishing` parts back to `scheduled`, none of them live that Herald knows of (any part stored
 * sent was rolled back), not looked at again before `retryAt` (`next_attempt_at`; absent from runs older than the
 * column). A part's attempt mark stays as its attempt left it (`sendMarked` decides, as for a post): open only where
 * its call may have sent (a look an earlier call's mark asked for, stopped by a credential renewal; a server error to
 * a create), so the next attempt looks for it before sending it again. It was cleared: a first part that had gone out
 * was sent again (X refuses that as a duplicate: the thread failed with its first part live).
 */
function requeueParts(db: Db, threadId: string, retryAt: number | undefined) {
  return db
    .updateTable('posts')
    .set({
      status: 'scheduled',
      next_attempt_at: retryAt === undefined ? null : new Date(retryAt),
      platform_post_id: null,
      platform_post_url: null,
      platform_post_url_unread: false,
      updated_at: sql`now()`,
    })
    .where('thread_id', '=', threadId)
    .where('status', '=', 'publishing');
}

/** A scheduled thread fully rolled back waits for its retry (`requeueParts`), retry_count + 1 on every part. */
export async function requeueThread(db: Db, threadId: string, retryAt?: number): Promise<void> {
  await requeueParts(db, threadId, retryAt).set({ retry_count: sql`retry_count + 1` }).execute();
}

/**
 * A scheduled thread that met its account's credential ended and being renewed, fully rolled back, waits for the
 * renewal (`requeueParts`) without spending a retry, as a post does (`requeueAwaitingCredential`): only while the
 * thread's time is less than `CREDENTIAL_WAIT_LIMIT_MS` before `now` (the workflow's clock). False when the wait is
 * over, the rows unchanged: the refusal is then a failed attempt.
 */
export async function requeueThreadAwaitingCredential(db: Db, threadId: string, options: { retryAt: number; now: number }): Promise<boolean> {
  const { numUpdatedRows } = await requeueParts(db, threadId, options.retryAt)
    .where('scheduled_at', '>', new Date(options.now - CREDENTIAL_WAIT_LIMIT_MS))
    .executeTakeFirst();
  return numUpdatedRows > 0n;
}

/**
 * A claimed scheduled thread, nothing of it live, whose account's credential the platform refused: every part
 * `publishing` → `deleted` with the reason, as a claimed post (`cancelClaimed`) and the account's scheduled posts are
 * (publishing-api.md "Post status": a scheduled post whose credential is lost), its reservations returned, a
 * `post.cancelled` event for each part, its first comment `failed`. Parts rolled back name no platform post.
 */
export async function cancelClaimedThread(db: Db, threadId: string, reason: AccountInactiveReason): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const cancelled = await trx
      .updateTable('posts')
      .set({
        status: 'deleted',
        error_message: reason,
        platform_post_id: null,
        platform_post_url: null,
        platform_post_url_unread: false,
        publish_attempt_started_at: null,
        ...failPendingCommentColumns(firstCommentNotSent.cancelled),
        updated_at: sql`now()`,
      })
      .where('thread_id', '=', threadId)
      .where('status', '=', 'publishing')
      .returning('id')
      .execute();
    const ids = cancelled.map((r) => r.id);
    await refundQuota(trx, ids);
    await recordPostEvents(trx, 'post.cancelled', ids);
    return ids;
  });
}

/** What `failThread` reads of the workflow's rollback report (`error.thread_rollback`): the parts still live. */
type RollbackReport = { still_live?: ReadonlyArray<{ platform_post_id: string }> } | null;

/**
 * A scheduled thread that will not be retried: every part `publishing` → `failed` with the sentence, retry_count + 1,
 * every reservation refunded; the first comment is marked as not sent. A part keeps its platform id and link only
 * while it is still live (the rollback's `still_live`): those of parts deleted again would name posts that no longer
 * exist. Without a report (a caller that has none) every stored id stays.
 */
export async function failThread(db: Db, threadId: string, message: string, rollback: RollbackReport = null): Promise<void> {
  const liveIds = rollback?.still_live?.map((part) => part.platform_post_id);
  const whileLive = <T>(column: 'platform_post_id' | 'platform_post_url' | 'platform_post_url_unread', otherwise: T) =>
    liveIds === undefined ? sql<T>`${sql.ref(column)}` : sql<T>`case when platform_post_id = any(${liveIds}::text[]) then ${sql.ref(column)} else ${otherwise} end`;
  await db.transaction().execute(async (trx) => {
    const failed = await trx
      .updateTable('posts')
      .set({
        status: 'failed',
        error_message: message,
        platform_post_id: whileLive<string | null>('platform_post_id', null),
        platform_post_url: whileLive<string | null>('platform_post_url', null),
        platform_post_url_unread: whileLive('platform_post_url_unread', false),
        retry_count: sql`retry_count + 1`,
        publish_attempt_started_at: null,
        first_comment_status: sql`case when first_comment_text is null then null else 'failed' end`,
        first_comment_error: sql`case when first_comment_text is null then null else 'The thread was not published, so its first comment was not sent' end`,
        updated_at: sql`now()`,
      })
      .where('thread_id', '=', threadId)
      .where('status', '=', 'publishing')
      .returning('id')
      .execute();
    await refundQuota(trx, failed.map((r) => r.id));
    if (failed.length > 0) await recordThreadEvent(trx, 'thread.failed', threadId, { thread_rollback: rollback });
  });
}

/**
 * A scheduled thread whose workflow Temporal refused to start as invalid at its request (`startAndAwait`): every
 * `scheduled` or `publishing` part → `failed` with the sentence, first comments not sent, every reservation refunded,
 * `thread.failed` written with a rollback of nothing published (`nothingPublished`, as the immediate one's: its
 * `thread_rollback` was null). Kept, as a scheduled thread that fails is (the client may hold its ids; README
 * "Threads"). Returns the parts it failed.
 */
export async function failUnstartedThread(db: Db, threadId: string, sentence: string): Promise<string[]> {
  const [first] = await loadThreadParts(db, threadId);
  if (!first) return [];
  return failUnstarted(db, (eb) => eb('thread_id', '=', threadId), sentence, (trx) => recordThreadEvent(trx, 'thread.failed', threadId, { thread_rollback: nothingPublished(first) }));
}

/** The rollback report (publishing-api.md `error.thread_rollback`) of a thread of which nothing went out. */
function nothingPublished(first: ThreadPartRow) {
  return { platform: first.platform, published: 0, rolled_back: [], still_live: [], rollback_supported: rollbackSupportedOf(first), quota_refunded: true };
}

/**
 * An immediate thread whose workflow Temporal refused to start: discarded as any immediate thread that fails is
 * (publishing-api.md "States and transitions" rule 2: no rows are kept, the whole quota refunded; `discardThread`),
 * its `thread.failed` event showing the parts `failed` with the sentence and a rollback of nothing published. It was
 * kept as `failed` rows (2026-12-07), where a thread refused by the platform keeps none. Returns the parts kept: none.
 */
export async function discardUnstartedThread(db: Db, threadId: string, sentence: string): Promise<string[]> {
  const parts = await loadThreadParts(db, threadId);
  const first = parts[0];
  if (!first) return [];
  await discardThread(db, threadId, parts.map((part) => part.id), { message: sentence, rollback: nothingPublished(first) });
  return [];
}
