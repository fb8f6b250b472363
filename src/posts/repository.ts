import { randomUUID } from 'node:crypto';
import { sql, type ExpressionBuilder, type QueryCreator, type RawBuilder, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { AccountInactiveReason } from '../accounts/lifecycle';
import { insertOwnComment, ownCommentRow, type OwnCommentInput } from '../comments/repository';
import type { EventType } from '../events/catalogue';
import { eventsInsertOf, recordEvents } from '../events/outbox';
import { currentRequestOrigin } from '../events/request-origin';
import type { Database, Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { NewPostRow, PostRow, PostStatus, PostUpdate } from '../db/tables/posts';
import { namedStatements, rowsOf } from '../db/named-statements';
import { idIsOneOf, oneOrManyIds, precompiled, type OneOrManyIds, unseenByPlanner } from '../db/precompiled';
import { isUuid } from '../db/uuid';
import { refundQuota, spendQuota, spendReservedOf } from '../quota/quota';
import { toPostView, type PostView } from './post-view';
import { spacingWindowsOf } from './rules/schedule';

/**
 * The `posts` table of single posts, as free functions taking `db` or a transaction first (threads: the thread
 * transitions are in `src/threads/repository.ts`). Every status change is one named write conditional on the status
 * it expects, so a repeated activity or a concurrent request changes nothing twice; the quota a transition settles is
 * settled through `src/quota` in the same transaction, and so is the event it reports (`src/events`, the outbox).
 *
 * Longer than 300 lines on purpose: every status transition of a post sits in this one file, so the lifecycle
 * (create → claim → attempt → published | failed | cancelled, and the first comment's) reads as one state machine.
 */

type Trx = Transaction<Database>;
type DbOrTrx = Db | Trx;

/** The charges a published post spends (a first comment's are settled by its own outcome). */
const publishedCharges = ['post', 'scheduled', 'x_link'] as const;
const firstCommentCharges = ['first_comment', 'x_link_first_comment'] as const;

// ---- reads ------------------------------------------------------------------------------------------------------

// The worker reads a post's row wherever a claim did not take it (not yet due, a retry, a hold that lost its claim) and
// in its later steps: named, so it is not planned each time.
const postByIdQuery = precompiled((db, { postId }: { postId: string }) => db.selectFrom('posts').selectAll().where('id', '=', postId));

export async function findPost(db: DbOrTrx, postId: string): Promise<PostRow | undefined> {
  return (await postByIdQuery.execute(db, { postId }))[0];
}

/** The user's post row; undefined when absent, another user's, or not a UUID. */
export async function findOwnPost(db: Db, userId: string, postId: string): Promise<PostRow | undefined> {
  if (!isUuid(postId)) return undefined;
  return db.selectFrom('posts').selectAll().where('id', '=', postId).where('user_id', '=', userId).executeTakeFirst();
}

export async function statusOf(db: Db, postId: string): Promise<PostStatus | undefined> {
  return (await db.selectFrom('posts').select('status').where('id', '=', postId).executeTakeFirst())?.status;
}

/** Posts joined with their account's state, which the post view needs. */
function viewQuery(db: DbOrTrx) {
  return db
    .selectFrom('posts')
    .leftJoin('accounts', 'accounts.id', 'posts.account_id')
    .selectAll('posts')
    .select('accounts.inactive_reason as account_inactive_reason');
}

// toPostView copies the fields it shows, so the row goes as read (copying it without the account's column was a
// measurable part of a listing's CPU).
function toViewOf(row: PostRow & { account_inactive_reason: AccountRow['inactive_reason'] }): PostView {
  return toPostView(row, row.account_id === null ? null : { inactive_reason: row.account_inactive_reason ?? null });
}

// The two statements of the read path (GET /posts/:id, GET /posts), compiled once (src/db/precompiled.ts).
const ownPostViewQuery = precompiled((db, { postId, userId }: { postId: string; userId: string }) =>
  viewQuery(db).where('posts.id', '=', postId).where('posts.user_id', '=', userId),
);

const withHidden = 'with hidden';
type ListingValues = { userId: string; status?: PostStatus; account_id?: string; group_id?: string; limit: number; offset: number };
const listingQuery = precompiled((db, values: ListingValues, variant) => {
  // The user, status, group and page are unseen by the planner (src/db/precompiled.ts), so PostgreSQL plans each shape
  // once per connection instead of every call. Planned for an average user, a page a tenth of the rows past a tenth,
  // the listing is read off its index in order, or a group's (at most 25 posts) sorted, whoever lists; a visible page
  // made it a sort of all the user's rows in a generic plan (16 ms for 20,000 drafts). An account is seen: whether its
  // index or the user's is cheaper depends on how many posts the account holds.
  let query = viewQuery(db).where('posts.user_id', '=', unseenByPlanner(values.userId, 'uuid')).where('posts.promoted_to_id', 'is', null);
  // The constants are literals, so that the statement's generic plan can use the partial index of the default
  // listing (migration 0085), whose predicate they are.
  if (values.status !== undefined) query = query.where('posts.status', '=', unseenByPlanner(values.status, 'text'));
  else if (values.group_id === undefined) query = query.where('posts.status', '!=', sql.lit('draft'));
  if (values.account_id !== undefined) query = query.where('posts.account_id', '=', values.account_id);
  if (values.group_id !== undefined) query = query.where('posts.group_id', '=', unseenByPlanner(values.group_id, 'uuid'));
  if (variant !== withHidden) query = query.where('posts.hidden', '=', sql.lit(false));
  return query
    .orderBy('posts.created_at', 'desc')
    .orderBy('posts.thread_id')
    .orderBy('posts.thread_order')
    .orderBy('posts.id', 'desc')
    .limit(unseenByPlanner(values.limit, 'bigint'))
    .offset(unseenByPlanner(values.offset, 'bigint'));
});

/**
 * The user's post as the API shows it, with its row, in one statement (`GET /posts/:id` reads nothing else); undefined
 * when absent, another user's, or not a UUID.
 */
export async function findOwnPostView(db: Db, userId: string, postId: string): Promise<{ row: PostRow; view: PostView } | undefined> {
  if (!isUuid(postId)) return undefined;
  const [found] = await ownPostViewQuery.execute(db, { postId, userId });
  if (!found) return undefined;
  return { row: found, view: toViewOf(found) };
}

// Every create's and promotion's answer reads its posts with it.
const postViewsQuery = precompiled((db, ids: OneOrManyIds) => viewQuery(db).where((eb) => idIsOneOf(eb.ref('posts.id'), ids)));

/** Posts as the API shows them, in the order of `ids`. */
export async function loadPostViews(db: DbOrTrx, ids: readonly string[]): Promise<PostView[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await postViewsQuery.execute(db, oneOrManyIds(ids))).map((row) => [row.id, toViewOf(row)]));
  return ids.map((id) => byId.get(id)).filter((view): view is PostView => view !== undefined);
}

/**
 * One event per post of `ids`, the post as the API shows it after the change, in the change's transaction. Its
 * request is the one being served, else the one the post records (an immediate publish reported by the worker).
 */
async function recordPostEvents(trx: Trx, type: EventType, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await recordPostEventsOf(trx, type, await viewQuery(trx).where('posts.id', 'in', ids).orderBy('posts.id').execute());
}

/** `recordPostEvents` of rows already read as the view reads them (the write returned them: one round trip fewer). */
async function recordPostEventsOf(trx: Trx, type: EventType, rows: ReadonlyArray<PostRow & { account_inactive_reason: AccountRow['inactive_reason'] }>): Promise<void> {
  if (rows.length === 0) return;
  const request = currentRequestOrigin();
  await recordEvents(trx, rows.map((row) => ({ userId: row.user_id, type, data: toViewOf(row), request: request ?? row.request_origin })));
}

export interface PostListFilter {
  limit?: number;
  offset?: number;
  status?: PostStatus;
  account_id?: string;
  group_id?: string;
  include_hidden?: boolean;
}

/**
 * The user's posts, newest first (publishing-api.md "GET /api/v1/posts"). Drafts are left out unless
 * `status=draft` or `group_id` is given; hidden posts unless `include_hidden=true`; a promoted draft is gone.
 */
export async function listPostViews(db: Db, userId: string, filter: PostListFilter): Promise<PostView[]> {
  const rows = await listingQuery.execute(
    db,
    { userId, status: filter.status, account_id: filter.account_id, group_id: filter.group_id, limit: filter.limit ?? 20, offset: filter.offset ?? 0 },
    filter.include_hidden === true ? withHidden : '',
  );
  return rows.map(toViewOf);
}

/**
 * The scheduled times a new `schedule_at` can clash with under the 5-minute spacing rule, by account: each account's
 * scheduled posts strictly inside the window around that time as the account parses it (`spacingWindowsOf`), but
 * `exceptPostIds` (the posts that move with the one checked). One statement for every account of a create, and the
 * index on `account_id, scheduled_at` reads only the windows, not every scheduled post of the accounts.
 */
export async function scheduledTimesNear(
  db: Db,
  schedule: { scheduleAt: string; timezone?: string },
  accounts: ReadonlyArray<{ id: string; timezone: string | null }>,
  exceptPostIds: readonly string[] = [],
): Promise<Record<string, Date[]>> {
  const windows = spacingWindowsOf(schedule, accounts);
  if (windows.length === 0) return {};
  const { rows } = await sql<{ account_id: string; scheduled_at: Date }>`
    select p.account_id, p.scheduled_at
    from unnest(${windows.map((w) => w.accountId)}::uuid[], ${windows.map((w) => w.after)}::timestamptz[], ${windows.map((w) => w.before)}::timestamptz[]) as w(account_id, after, before)
    join posts p on p.account_id = w.account_id and p.status = 'scheduled' and p.scheduled_at > w.after and p.scheduled_at < w.before
    where p.id <> all(${exceptPostIds}::uuid[])`.execute(db);
  const out: Record<string, Date[]> = {};
  for (const row of rows) (out[row.account_id] ??= []).push(row.scheduled_at);
  return out;
}

/**
 * Which posts a reconciler's look reads: every one needing a workflow, or those created or changed within the last
 * `changedWithinMs` (by the database's clock) beside the overdue and those publishing for long.
 */
export type ReconcileScope = 'all' | { changedWithinMs: number };

/**
 * Posts whose status needs a running workflow (`scheduled`, `publishing`), soonest first, in `scope`. Read through
 * a cursor, `PAGE_ROWS` at a time, keeping only the rows `keep` accepts: the reconciler's look a minute after a burst
 * reads every post it created, 10,000 or 100,000 of them, and most are skipped (issue 15). The cursor's transaction
 * lasts the reading only. Each row has what the reconciler uses and no more, its due time as epoch milliseconds:
 * parsing two timestamps a row was 8.8 of the 22 MB that reading allocated a minute after a burst.
 */
export async function postsNeedingWorkflows(db: Db, scope: ReconcileScope, keep: (row: PostNeedingWorkflow) => boolean = () => true): Promise<PostNeedingWorkflow[]> {
  return readThroughCursor(db, reconcilerColumns(postsNeedingWorkflowsQuery(db, scope)), keep);
}

/** `postsNeedingWorkflows(db, 'all')` with their times and retry counts (`herald posts stuck`). */
export async function postsNeedingWorkflowsInDetail(db: Db) {
  const query = postsNeedingWorkflowsQuery(db, 'all').select(['id', 'thread_id', 'group_id', 'workflow_id', 'status', 'scheduled_at', 'updated_at', 'retry_count']);
  return readThroughCursor(db, query, () => true);
}

async function readThroughCursor<Row>(db: Db, query: SelectQueryBuilder<Database, 'posts', Row>, keep: (row: Row) => boolean): Promise<Row[]> {
  return db.transaction().execute(async (trx) => {
    await sql`declare posts_needing_workflows no scroll cursor for ${query}`.execute(trx);
    const kept: Row[] = [];
    for (;;) {
      const page = await sql<Row>`fetch forward ${sql.lit(PAGE_ROWS)} from posts_needing_workflows`.execute(trx);
      for (const row of page.rows) if (keep(row)) kept.push(row);
      if (page.rows.length < PAGE_ROWS) return kept;
    }
  });
}

const PAGE_ROWS = 500;

type PostNeedingWorkflow = Awaited<ReturnType<ReturnType<typeof reconcilerColumns>['execute']>>[number];

function reconcilerColumns(query: ReturnType<typeof postsNeedingWorkflowsQuery>) {
  return query.select(['id', 'thread_id', 'group_id', 'workflow_id', 'status']).select(sql<number | null>`(extract(epoch from scheduled_at) * 1000)::float8`.as('scheduled_ms'));
}

function postsNeedingWorkflowsQuery(db: Db, scope: ReconcileScope) {
  let query = db.selectFrom('posts').where('status', 'in', ['scheduled', 'publishing']);
  if (scope !== 'all') {
    const since = sql<Date>`now() - make_interval(secs => ${scope.changedWithinMs / 1000})`;
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', since),
        eb('updated_at', '>', since),
        eb('scheduled_at', '<', sql<Date>`now() - interval '1 minute'`),
        eb.and([eb('status', '=', 'publishing'), eb('updated_at', '<', sql<Date>`now() - interval '10 minutes'`)]),
      ]),
    );
  }
  return query.orderBy('scheduled_at');
}

/** The media lists of other posts still waiting to publish that use any of `mediaIds` (they keep their copies). */
export async function mediaStillWaiting(db: Db, mediaIds: readonly string[], exceptPostId: string): Promise<Array<Pick<PostRow, 'media'>>> {
  return db
    .selectFrom('posts')
    .select('media')
    .where('id', '!=', exceptPostId)
    .where('status', 'in', ['scheduled', 'publishing', 'draft'])
    .where((eb) => eb.or(mediaIds.map((id) => sql<boolean>`${eb.ref('media')} @> ${JSON.stringify([{ media_id: id }])}::jsonb`)))
    .execute();
}

// ---- creation and edits (API side) -------------------------------------------------------------------------------

/** Inserts the rows; with a `guard` (`unchangedSince`), in one statement that fails, inserting nothing, unless it holds. */
export async function insertPosts(db: DbOrTrx, rows: ReadonlyArray<NewPostRow>, guard?: RawBuilder<boolean>): Promise<void> {
  if (guard) await sql`with written as (${postsInsertOf(db, rows)}) select ${guard} as unchanged`.execute(db);
  else await postsInsertOf(db, rows).execute();
}

/** `insertPosts` as a statement to run or to make part of another (`reserveQuotaWith`: the posts and their quota as one). */
export function postsInsertOf(db: DbOrTrx, rows: ReadonlyArray<NewPostRow>) {
  const request = JSON.stringify(currentRequestOrigin());
  return db.insertInto('posts').values(rows.map((row) => (row.status === 'publishing' ? { ...row, request_origin: request } : row)));
}

/** Edits a scheduled post or a draft in place; false when it left `expected` (or was promoted) meanwhile. */
export async function editPost(trx: Trx, postId: string, expected: PostStatus, content: PostUpdate): Promise<boolean> {
  const changed = await trx
    .updateTable('posts')
    .set({ ...content, updated_at: sql`now()` })
    .where('id', '=', postId)
    .where('status', '=', expected)
    .where('promoted_to_id', 'is', null)
    .executeTakeFirst();
  return changed.numUpdatedRows > 0n;
}

/** A thread shares one time: its parts still `expected` move with the one edited. */
export async function moveScheduledTime(trx: Trx, postIds: readonly string[], expected: PostStatus, time: { scheduled_at: Date | null; timezone: string | null }): Promise<void> {
  await trx.updateTable('posts').set({ ...time, updated_at: sql`now()` }).where('id', 'in', postIds).where('status', '=', expected).execute();
}

/** The draft points at the post it became; false when it is no longer an unpromoted draft. */
export async function markPromoted(trx: Trx, draftId: string, promotedToId: string): Promise<boolean> {
  const marked = await trx
    .updateTable('posts')
    .set({ promoted_to_id: promotedToId, updated_at: sql`now()` })
    .where('id', '=', draftId)
    .where('status', '=', 'draft')
    .where('promoted_to_id', 'is', null)
    .executeTakeFirst();
  return marked.numUpdatedRows > 0n;
}

/** A published post's link read later (threads, instagram); only a missing link is filled. */
export async function storeResolvedUrl(db: Db, postId: string, url: string): Promise<void> {
  await db.updateTable('posts').set({ platform_post_url: url }).where('id', '=', postId).where('platform_post_url', 'is', null).execute();
}

/** What one request created together: its fan-out group, else its thread, else the post alone. */
export type PostUnit = { groupId: string } | { threadId: string } | { postId: string };

export function unitOf(row: Pick<PostRow, 'id' | 'group_id' | 'thread_id'>): PostUnit {
  return row.group_id ? { groupId: row.group_id } : row.thread_id ? { threadId: row.thread_id } : { postId: row.id };
}

/** Hides or shows the user's posts of one unit; returns their ids. */
export async function setHidden(db: Db, userId: string, unit: PostUnit, hidden: boolean): Promise<string[]> {
  const update = db.updateTable('posts').set({ hidden, updated_at: sql`now()` }).where('user_id', '=', userId).where((eb) => inUnit(eb, unit));
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

/** A failed post, or a published one the platform deleted, is marked `deleted` (the record stays). */
export async function markDeleted(db: Db, postId: string, expected: 'failed' | 'published'): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const deleted = await trx.updateTable('posts').set({ status: 'deleted', updated_at: sql`now()` }).where('id', '=', postId).where('status', '=', expected).returning('id').execute();
    await recordPostEvents(trx, 'post.deleted', deleted.map((r) => r.id));
  });
}

/**
 * Cancels scheduled posts (`scheduled` → `deleted`, `error_message` = the reason, null when the user deleted them),
 * every reservation refunded, in one transaction. A post already publishing finishes: nothing live is ever marked
 * deleted. Returns the ids cancelled (none when repeated).
 */
export async function cancelScheduled(db: Db, target: { postIds?: readonly string[]; accountId?: string; reason: AccountInactiveReason | null }): Promise<string[]> {
  if (!target.postIds && !target.accountId) throw new Error('cancelScheduled needs postIds or accountId');
  return db.transaction().execute(async (trx) => {
    let update = trx.updateTable('posts').set({ status: 'deleted', error_message: target.reason, updated_at: sql`now()` }).where('status', '=', 'scheduled');
    if (target.postIds) update = update.where('id', 'in', target.postIds.length ? target.postIds : ['00000000-0000-0000-0000-000000000000']);
    if (target.accountId) update = update.where('account_id', '=', target.accountId);
    const cancelled = (await update.returning('id').execute()).map((r) => r.id);
    await refundQuota(trx, cancelled);
    await recordPostEvents(trx, target.reason === null ? 'post.deleted' : 'post.cancelled', cancelled);
    return cancelled;
  });
}

// ---- publication (worker side) -----------------------------------------------------------------------------------

/** A scheduled post that is due: `scheduled` → `publishing`. False when it is no longer scheduled. */
export async function claimScheduled(db: Db, postId: string): Promise<boolean> {
  const claimed = await db
    .updateTable('posts')
    .set({ status: 'publishing', request_origin: null, updated_at: sql`now()` })
    .where('id', '=', postId)
    .where('status', '=', 'scheduled')
    .executeTakeFirst();
  return claimed.numUpdatedRows > 0n;
}

/**
 * What an attempt reads of the post's account in the statement that marks it (`account_*`, all null when the account
 * row is gone): the credentials the send needs (`publishingContextOfClaimed`), and its state as the post view shows
 * it, which `recordPublishedAll` writes into the event without reading it again.
 */
const publishingAccountColumns = [
  'accounts.user_id as account_user_id',
  'accounts.active as account_active',
  'accounts.credentials_sealed as account_credentials_sealed',
  'accounts.settings as account_settings',
  'accounts.credential_expires_at as account_credential_expires_at',
  'accounts.inactive_reason as account_inactive_reason',
] as const;

/**
 * The version of a row as a write returns it (its `xmin`: the transaction that last wrote it). A later write
 * conditional on it changes the row only if nothing else wrote it in between (`recordPublishedAll`).
 */
const rowVersion = sql<string>`posts.xmin::text`.as('row_version');

/**
 * Whether an earlier platform call of the post never reported back (its mark was already set): the subquery reads the
 * row as it was before the write.
 */
const earlierAttemptOpen = sql<boolean>`(select earlier.publish_attempt_started_at is not null from posts earlier where earlier.id = posts.id)`.as('earlier_attempt_open');

/**
 * A due scheduled post claimed and its platform call marked as begun (as `beginPublishAttempt`) in one statement:
 * `scheduled` → `publishing` only when its `scheduled_at` has passed by `now` (the workflow's clock). It returns the
 * columns of the post's account that the send needs (`account_*`, null when the account row is gone), so the send
 * reads nothing more. Undefined when it is not `scheduled` or not yet due; the caller reads the row to tell which.
 */
export async function claimDueScheduled(db: Db, postId: string, now: Date) {
  return (await markAttempts(db, [postId], { dueBy: now })).at(0);
}

/**
 * `claimDueScheduled` of posts held until their instant (`publishWhenDue`), in one statement for many (a burst's claims
 * at :00 are a few statements, not one per post): each claimed only if it is still `scheduled` at exactly
 * `scheduledAt` (to the millisecond, as the workflow read it), so a hold made stale by a reschedule or a cancellation
 * never takes the row. Returns the rows it took; a post missing from the answer was not taken.
 */
export async function claimAllScheduledAt(db: Db, postIds: readonly string[], scheduledAt: Date) {
  return markAttempts(db, postIds, { scheduledAt });
}

/**
 * Marks a platform call as begun (migration 0050) and returns the `publishing` row, with whether an earlier call never
 * reported back (its mark still set), and its account's columns the send needs (`publishingAccountColumns`, as
 * `claimDueScheduled` returns them). One statement: the subquery reads the row as it was before this update.
 */
export async function beginPublishAttempt(db: Db, postId: string) {
  return (await beginPublishAttempts(db, [postId]))[0];
}

/** `beginPublishAttempt` of many posts (an immediate fan-out's first attempts) in one statement. */
export async function beginPublishAttempts(db: Db, postIds: readonly string[]) {
  return markAttempts(db, postIds, {});
}

/** A thread part that went out, its platform id to store (`recordPartPublished`). */
export interface PartPublished {
  postId: string;
  platformPostId: string;
  url: string | null;
}

/**
 * `beginPublishAttempt` of a thread's next part, storing the part sent before it in the same statement, if nothing
 * wrote that part's row since its own mark (`row_version`). With the mark, `stored_version`: that part's version
 * after its store, or null when it was not stored (written since, or no longer `publishing`: the caller stores it
 * with `recordPartPublished`). Undefined when the next part is not `publishing`.
 */
export async function beginPartAttemptAfter(db: Db, postId: string, previous: PartPublished & { markedVersion: string }) {
  const stored = { storedPartId: previous.postId, storedPlatformPostId: previous.platformPostId, storedUrl: previous.url, storedSince: previous.markedVersion };
  return (await markAttemptsQuery.execute(db, { ...oneOrManyIds([postId]), ...stored }))[0];
}

/** One part of a thread went out: its platform id is stored at once (it stays `publishing`), so what is live is never only in memory; its attempt is closed. */
export async function recordPartPublished(db: Db, part: PartPublished): Promise<void> {
  await partStoredUpdate(db, { storedPartId: part.postId, storedPlatformPostId: part.platformPostId, storedUrl: part.url }).execute();
}

/** A part's store (`recordPartPublished`); with `storedSince`, only if its row is still that version. */
type StoredPart = { storedPartId: string; storedPlatformPostId: string; storedUrl: string | null; storedSince?: string };

function partStoredUpdate(db: QueryCreator<Database>, part: StoredPart) {
  const update = db
    .updateTable('posts')
    .set({ platform_post_id: part.storedPlatformPostId, platform_post_url: part.storedUrl, publish_attempt_started_at: null, updated_at: sql`now()` })
    .where('id', '=', part.storedPartId)
    .where('status', '=', sql.lit('publishing'));
  return part.storedSince === undefined ? update : update.where(sql`xmin`, '=', sql`${part.storedSince}::xid`);
}

/**
 * Which mark: a claim of `scheduled` rows due by `dueBy` (`claimDueScheduled`) or scheduled at exactly `scheduledAt`
 * (`claimAllScheduledAt`), which makes them `publishing`; with neither, the attempt of rows already `publishing`,
 * and with `storedPartId`, a thread part stored before it in the same statement (`beginPartAttemptAfter`).
 */
type MarkKind = { dueBy?: Date; scheduledAt?: Date };
type MarkValues = OneOrManyIds & MarkKind & Partial<StoredPart>;

/**
 * The attempt's mark of a claim and of a post already `publishing`, one statement for any number of posts: the rows
 * of `postIds` in the status the mark expects get their mark (a claim also its new status), and each comes back as a
 * `MarkedPost`, joined to its account's columns in the same statement. Compiled once per kind of mark and sent as a
 * named statement (src/db/precompiled.ts: every publish and every due post runs it).
 */
const markAttemptsQuery = precompiled((db, values: MarkValues) => {
  const claim = values.dueBy !== undefined || values.scheduledAt !== undefined;
  const stored = values.storedPartId !== undefined;
  // The store's CTE is read by the last column alone (`stored_version`); without it the statement is the mark alone.
  const creator = stored
    ? (db.with('stored', (qb) => partStoredUpdate(qb, values as StoredPart).returning(sql<string>`xmin::text`.as('version'))) as unknown as QueryCreator<Database>)
    : db;
  return creator
    .with('marked', (qb) => {
      let update = claim
        ? qb
            .updateTable('posts')
            .set({ status: 'publishing', request_origin: null, publish_attempt_started_at: sql`now()`, updated_at: sql`now()` })
            .where('status', '=', sql.lit('scheduled'))
        : qb.updateTable('posts').set({ publish_attempt_started_at: sql`now()` }).where('status', '=', sql.lit('publishing'));
      update = update.where((eb) => idIsOneOf(eb.ref('id'), values));
      if (values.dueBy !== undefined) update = update.where((eb) => eb.or([eb('scheduled_at', 'is', null), eb('scheduled_at', '<=', values.dueBy!)]));
      if (values.scheduledAt !== undefined) update = update.where(sql`date_trunc('milliseconds', scheduled_at)`, '=', values.scheduledAt);
      return update.returningAll().returning([earlierAttemptOpen, rowVersion]);
    })
    .selectFrom('marked')
    .leftJoin('accounts', 'accounts.id', 'marked.account_id')
    .selectAll('marked')
    .select(publishingAccountColumns)
    .$if(stored, (qb) => qb.select(sql<string | null>`(select version from stored)`.as('stored_version')));
});

async function markAttempts(db: Db, postIds: readonly string[], mark: MarkKind) {
  if (postIds.length === 0) return [];
  return markAttemptsQuery.execute(db, { ...oneOrManyIds(postIds), ...mark });
}

/**
 * A `publishing` row as an attempt marked it (`markAttempts`): the row after the mark, whether an earlier call never
 * reported back, its version (`row_version`) and its account's columns (`account_*`). The send reads its credentials
 * from it (`publishingContextOfClaimed`) and `recordPublishedAll` its version and account state.
 */
export type MarkedPost = Awaited<ReturnType<typeof markAttempts>>[number];

/** The platform answered with a refusal: nothing is live, so the next attempt need not look first. */
export async function clearPublishAttempt(db: Db, postId: string): Promise<void> {
  await db.updateTable('posts').set({ publish_attempt_started_at: null }).where('id', '=', postId).execute();
}

/** The platform took it: `publishing` → `published` and its reservations spent, in one transaction. */
export async function recordPublished(db: Db, postId: string, outcome: PublishedOutcome): Promise<void> {
  await recordPublishedAll(db, [{ postId, ...outcome }]);
}

interface PublishedOutcome {
  platformPostId: string;
  url: string | null;
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
      const published = await sql<PostRow & { account_inactive_reason: AccountRow['inactive_reason'] }>`
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
      published_at = outcome.published_at, error_message = null, updated_at = now()
    from ${rowsOf('outcome', {
      id: { values: outcomes.map((o) => o.postId), type: 'uuid' },
      platform_post_id: { values: outcomes.map((o) => o.platformPostId), type: 'text' },
      url: { values: outcomes.map((o) => o.url), type: 'text' },
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
function unchangedSinceMark(version: RawBuilder<unknown>, inactiveReason: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`(posts.xmin = ${version}
    and (select accounts.inactive_reason from accounts where accounts.id = posts.account_id) is not distinct from ${inactiveReason})`;
}

/** A marked row (with the account state its mark read) as the API shows it once `changes` are written, nothing else. */
function viewOfMarked(marked: PostRow & { account_inactive_reason: AccountRow['inactive_reason'] }, changes: Partial<PostRow>): PostView {
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
 * A failed attempt of a `publishing` post: `retry_count` goes up. Final: `failed` with the sentence, its first comment
 * marked as not sent, every reservation refunded. Otherwise the post waits for its retry as `requeue`.
 */
export async function recordFailedAttempt(db: Db, postId: string, input: { message: string; final: boolean; requeue: 'scheduled' | 'publishing' }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('posts')
      .set({
        status: input.final ? 'failed' : input.requeue,
        error_message: input.final ? input.message : null,
        retry_count: sql`retry_count + 1`,
        publish_attempt_started_at: null,
        first_comment_status: input.final ? sql`case when first_comment_text is null then null else 'failed' end` : sql`first_comment_status`,
        first_comment_error: input.final ? sql`case when first_comment_text is null then null else 'The post was not published, so its first comment was not sent' end` : sql`first_comment_error`,
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

/** A claimed scheduled post whose account's credential was refused: `publishing` → `deleted` with the reason, refunded. */
export async function cancelClaimed(db: Db, postId: string, reason: AccountInactiveReason): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const cancelled = await trx
      .updateTable('posts')
      .set({ status: 'deleted', error_message: reason, updated_at: sql`now()` })
      .where('id', '=', postId)
      .where('status', '=', 'publishing')
      .executeTakeFirst();
    if (cancelled.numUpdatedRows > 0n) {
      await refundQuota(trx, [postId]);
      await recordPostEvents(trx, 'post.cancelled', [postId]);
    }
  });
}

// ---- first comment -------------------------------------------------------------------------------------------------

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
        .returning([sql<boolean>`(select earlier.first_comment_attempt_started_at is not null from posts earlier where earlier.id = posts.id)`.as('earlier_attempt_open'), rowVersion]),
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
  await db.transaction().execute(async (trx) => {
    // The posted comment is stored with the post's comments in the same transaction (`own: true`).
    const stored = outcome.ok ? await insertOwnComment(trx, outcome.comment) : null;
    const settled = await trx
      .updateTable('posts')
      .set(
        outcome.ok
          ? { first_comment_status: 'posted', first_comment_platform_id: outcome.comment.platformCommentId, first_comment_comment_id: stored!.id, first_comment_error: null, updated_at: sql`now()` }
          : { first_comment_status: 'failed', first_comment_error: outcome.message, updated_at: sql`now()` },
      )
      .where('id', '=', postId)
      .where('first_comment_status', '=', 'pending')
      .returning('id')
      .execute();
    if (outcome.ok) await spendQuota(trx, [postId], firstCommentCharges);
    else await refundQuota(trx, [postId], firstCommentCharges);
    await recordPostEvents(trx, outcome.ok ? 'first_comment.posted' : 'first_comment.failed', settled.map((r) => r.id));
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

/** `publishing` → `scheduled` without spending a retry: the account's credential is being renewed (issue 16). */
export async function requeueAwaitingCredential(db: Db, postId: string): Promise<void> {
  await db
    .updateTable('posts')
    .set({ status: 'scheduled', publish_attempt_started_at: null, updated_at: sql`now()` })
    .where('id', '=', postId)
    .where('status', '=', 'publishing')
    .execute();
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
