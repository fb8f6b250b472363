import { expressionBuilder, sql, type Expression, type SqlBool, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { AccountRow } from '../db/tables/accounts';
import type { PostRow, PostStatus } from '../db/tables/posts';
import { idIsOneOf, oneOrManyIds, precompiled, type OneOrManyIds, unseenByPlanner } from '../db/precompiled';
import { isUuid } from '../db/uuid';
import { rowVersion } from './attempt-marks';
import { toPostView, type PostView } from './post-view';
import { spacingWindowsOf } from './rules/schedule';

/**
 * Reads of the `posts` table: a post's row, posts as the API shows them (joined with their account's state), the
 * listing, and what a create or an edit checks against (the spacing rule's neighbours, media still in use). The
 * writes are in `repository.ts` (creation, edits, the user's transitions), `removals.ts` (delete, cancel),
 * `attempt-marks.ts`, `attempt-outcomes.ts` and `first-comment-repository.ts`.
 */

type DbOrTrx = Db | Transaction<Database>;

/** A post's row with its account's state, as `viewQuery` reads it and a marked row carries it. */
export type PostViewRow = PostRow & { account_inactive_reason: AccountRow['inactive_reason'] };

// The worker reads a post's row wherever a claim did not take it (not yet due, a retry, a hold that lost its claim) and
// in its later steps: named, so it is not planned each time.
const postByIdQuery = precompiled((db, { postId }: { postId: string }) => db.selectFrom('posts').selectAll().where('id', '=', postId));

export async function findPost(db: DbOrTrx, postId: string): Promise<PostRow | undefined> {
  return (await postByIdQuery.execute(db, { postId }))[0];
}

/** A post's row as the API read it to change it, with its version (`row_version`): an edit writes it only unchanged since (`editPost`). */
export type OwnPostRow = PostRow & { row_version: string };

/** The user's post row; undefined when absent, another user's, or not a UUID. A promoted draft is found: an edit or a delete of it answers 409. */
export async function findOwnPost(db: Db, userId: string, postId: string): Promise<OwnPostRow | undefined> {
  if (!isUuid(postId)) return undefined;
  return db.selectFrom('posts').selectAll().select(rowVersion).where('id', '=', postId).where('user_id', '=', userId).executeTakeFirst();
}

// A promoted draft is gone (publishing-api.md "Post status"): the post it became is read under its own id. Every read
// that shows posts or acts on one by its id, but is not an edit of the draft (409), leaves it out through these two.
const notPromotedDraft: Expression<SqlBool> = expressionBuilder<Database, 'posts'>()('posts.promoted_to_id', 'is', null);

/** The user's post under this id as the API reads it: a promoted draft is not one. */
export function isOwnLivePost(postId: string, userId: string): Expression<SqlBool> {
  const eb = expressionBuilder<Database, 'posts'>();
  return eb.and([eb('posts.id', '=', postId), eb('posts.user_id', '=', userId), notPromotedDraft]);
}

/** The user's post row as `GET /posts/:id` finds it; undefined when absent, another user's, not a UUID, or a promoted draft. */
export async function findOwnLivePost(db: Db, userId: string, postId: string): Promise<PostRow | undefined> {
  if (!isUuid(postId)) return undefined;
  return db.selectFrom('posts').selectAll().where(isOwnLivePost(postId, userId)).executeTakeFirst();
}

export async function statusOf(db: Db, postId: string): Promise<PostStatus | undefined> {
  return (await db.selectFrom('posts').select('status').where('id', '=', postId).executeTakeFirst())?.status;
}

/** The status and first comment of each of `postIds` still there (a removed immediate thread part is not). */
export function settlementsOf(db: Db, postIds: readonly string[]) {
  return db.selectFrom('posts').select(['status', 'first_comment_status']).where('id', 'in', postIds).execute();
}

/** Posts joined with their account's state, which the post view needs. */
export function viewQuery(db: DbOrTrx) {
  return db
    .selectFrom('posts')
    .leftJoin('accounts', 'accounts.id', 'posts.account_id')
    .selectAll('posts')
    .select('accounts.inactive_reason as account_inactive_reason');
}

// toPostView copies the fields it shows, so the row goes as read (copying it without the account's column was a
// measurable part of a listing's CPU).
export function toViewOf(row: PostViewRow): PostView {
  return toPostView(row, row.account_id === null ? null : { inactive_reason: row.account_inactive_reason ?? null });
}

// The two statements of the read path (GET /posts/:id, GET /posts), compiled once (src/db/precompiled.ts). A promoted
// draft is gone from both.
const ownPostViewQuery = precompiled((db, { postId, userId }: { postId: string; userId: string }) => viewQuery(db).where(isOwnLivePost(postId, userId)));

const withHidden = 'with hidden';
type ListingValues = { userId: string; status?: PostStatus; account_id?: string; group_id?: string; limit: number; offset: number };
const listingQuery = precompiled((db, values: ListingValues, variant) => {
  // The user, status, group and page are unseen by the planner (src/db/precompiled.ts), so PostgreSQL plans each shape
  // once per connection instead of every call. Planned for an average user, a page a tenth of the rows past a tenth,
  // the listing is read off its index in order, or a group's (at most 25 posts) sorted, whoever lists; a visible page
  // made it a sort of all the user's rows in a generic plan (16 ms for 20,000 drafts). An account is seen: whether its
  // index or the user's is cheaper depends on how many posts the account holds.
  let query = viewQuery(db).where('posts.user_id', '=', unseenByPlanner(values.userId, 'uuid')).where(notPromotedDraft);
  // The constants are literals, so that the statement's generic plan can use the partial index of the default
  // listing (migrations 0085, 0297), whose predicate they imply; it holds hidden posts too, for both variants.
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
 * when absent, another user's, not a UUID, or a promoted draft.
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
 * "A post still to publish names this media": a post of `userId`, scheduled or publishing (and a draft, with
 * `drafts`), other than `exceptPostId`, lists `mediaId` in its media. The one place this is written; `mediaId` and
 * `userId` are expressions, so it serves a statement over many media rows (`media-cleanup.ts`) as well as a list of ids.
 */
export function waitingPostNames(
  mediaId: Expression<string>,
  userId: Expression<string>,
  options: { drafts: boolean; exceptPostId?: string },
): Expression<SqlBool> {
  const statuses: PostStatus[] = options.drafts ? ['scheduled', 'publishing', 'draft'] : ['scheduled', 'publishing'];
  return sql<SqlBool>`exists (
    select 1 from posts
    where posts.user_id = ${userId} and posts.status in (${sql.join(statuses)})
      and posts.media @> jsonb_build_array(jsonb_build_object('media_id', ${mediaId}::text))${
        options.exceptPostId === undefined ? sql`` : sql` and posts.id <> ${options.exceptPostId}`
      })`;
}

/**
 * Which of `mediaIds` another post still waiting to publish, or a draft, names (they keep their copies). A post only
 * ever names its own user's media, so the posts looked at are those of each media's owner.
 */
export async function mediaStillWaiting(db: Db, mediaIds: readonly string[], exceptPostId: string): Promise<string[]> {
  const ids = mediaIds.filter(isUuid);
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('media')
    .select('id')
    .where('id', 'in', ids)
    .where(({ ref }) => waitingPostNames(ref('media.id'), ref('media.user_id'), { drafts: true, exceptPostId }))
    .execute();
  return rows.map((row) => row.id);
}
