import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import { inTransaction } from '../db/in-transaction';
import type { CommentRow } from '../db/tables/comments';
import type { PlatformComment, PlatformSlug } from '../platforms/types';

/**
 * Every write to `comments`, each a named statement (migration 0060). Both the sync (refreshes) and the comment
 * actions (reply, hide, delete, first comments) go through here. `deleted` only ever moves to true.
 */

type Executor = Db | Transaction<Database>;

/**
 * PostgreSQL text cannot hold U+0000, and a platform may answer one in a comment's text or an author's name: the
 * whole page's insert was refused and the refresh failed (README "Comment listing and sync", 2026-12-07). Every
 * platform string a comment row shows passes through here; ids are not rewritten (they address the platform), a
 * listing drops a comment whose id holds one (`listedComments`).
 */
function storable(text: string): string;
function storable(text: string | null): string | null;
function storable(text: string | null): string | null {
  return text === null ? null : text.replace(/\u0000/g, '');
}

/**
 * publishing-api.md "Comment flags": where deleting a comment takes its replies with it. On x, bluesky and mastodon
 * replies stay live (they are posts of their own); telegram reads no comments.
 */
const repliesDeletedWithParent: Readonly<Record<PlatformSlug, boolean>> = {
  facebook: true,
  instagram: true,
  threads: true,
  linkedin: true,
  x: false,
  bluesky: false,
  mastodon: false,
  telegram: false,
};

export interface OwnCommentInput {
  postId: string;
  platform: PlatformSlug;
  platformCommentId: string;
  platformParentId: string | null;
  author: { handle: string; displayName: string; platformId: string; avatarUrl: string | null };
  text: string;
  createdAt: Date;
  /** A reply's: the attempt whose quota charge paid for it (migration 0271). */
  replyChargeId?: string;
}

/**
 * Stores a comment the service itself published (a reply, a first comment) at once with `own: true`
 * (decisions.md "Comments"). Idempotent on the platform id: a refresh that already stored it keeps its id.
 */
export async function insertOwnComment(db: Executor, input: OwnCommentInput): Promise<CommentRow> {
  return db
    .insertInto('comments')
    .values(ownCommentRow(input))
    // A charge once recorded stays: a platform's dedupe answering with an older reply does not pay for it again.
    .onConflict((oc) =>
      oc.columns(['post_id', 'platform_comment_id']).doUpdateSet({ own: true, reply_charge_id: sql`coalesce(comments.reply_charge_id, excluded.reply_charge_id)`, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The row of a comment the service itself published (`own: true`), as `insertOwnComment` writes it. */
export function ownCommentRow(input: OwnCommentInput) {
  return {
    post_id: input.postId,
    platform: input.platform,
    platform_comment_id: input.platformCommentId,
    platform_parent_id: input.platformParentId,
    author_handle: input.author.handle,
    author_display_name: input.author.displayName,
    author_platform_id: input.author.platformId,
    author_avatar_url: input.author.avatarUrl,
    text: input.text,
    created_at: input.createdAt,
    own: true,
    reply_charge_id: input.replyChargeId ?? null,
  };
}

/** A comment of one of `userId`'s posts, by service id; undefined for another user's (the caller answers 404). */
export async function findCommentForUser(db: Executor, userId: string, postId: string, commentId: string): Promise<CommentRow | undefined> {
  return db
    .selectFrom('comments')
    .innerJoin('posts', 'posts.id', 'comments.post_id')
    .selectAll('comments')
    .where('comments.id', '=', commentId)
    .where('comments.post_id', '=', postId)
    .where('posts.user_id', '=', userId)
    .executeTakeFirst();
}

/** Hidden through the service, or shown again. Returns the whole row. */
export async function markCommentHidden(db: Executor, commentId: string, hidden: boolean): Promise<CommentRow> {
  return db
    .updateTable('comments')
    .set({ hidden, updated_at: sql`now()` })
    .where('id', '=', commentId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Records comments as gone from the platform, with the per-platform cascade to their replies (and replies of
 * replies), and returns answered comments whose reply was among them to `replied: false`. Already deleted comments
 * are left as they are. Returns the ids newly marked deleted.
 */
export async function markCommentsDeleted(db: Executor, postId: string, platform: PlatformSlug, commentIds: readonly string[]): Promise<string[]> {
  if (commentIds.length === 0) return [];
  const run = async (trx: Transaction<Database>): Promise<string[]> => {
    const ids = [...commentIds];
    const doomed = repliesDeletedWithParent[platform]
      ? await sql<{ id: string }>`
          with recursive tree(id, platform_comment_id) as (
            select id, platform_comment_id from comments where post_id = ${postId} and id = any(${ids}::uuid[])
            union
            select c.id, c.platform_comment_id from comments c join tree t on c.platform_parent_id = t.platform_comment_id
            where c.post_id = ${postId}
          )
          select id from tree`.execute(trx).then((r) => r.rows.map((row) => row.id))
      : ids;
    const deleted = await trx
      .updateTable('comments')
      .set({ deleted: true, updated_at: sql`now()` })
      .where('post_id', '=', postId)
      .where('id', 'in', doomed)
      .where('deleted', '=', false)
      .returning('id')
      .execute();
    const newlyDeleted = deleted.map((r) => r.id);
    if (newlyDeleted.length > 0) await clearRepliedFor(trx, newlyDeleted);
    return newlyDeleted;
  };
  return inTransaction(db, run);
}

/** The reply a comment's `replied` points at is gone: the comment counts as unanswered again. */
async function clearRepliedFor(db: Executor, deletedReplyIds: readonly string[]): Promise<void> {
  await db
    .updateTable('comments')
    .set({ replied: false, replied_at: null, reply_comment_id: null, updated_at: sql`now()` })
    .where('reply_comment_id', 'in', deletedReplyIds)
    .execute();
}

/** A reply was made through the service (visible from the next listing). */
export async function markCommentReplied(db: Executor, commentId: string, replyCommentId: string, at: Date): Promise<void> {
  await db
    .updateTable('comments')
    .set({ replied: true, replied_at: at, reply_comment_id: replyCommentId, updated_at: sql`now()` })
    .where('id', '=', commentId)
    .execute();
}

/** The stored comment of a post with this platform id, if any (a reply whose answer was lost may already be stored). */
export async function findCommentByPlatformId(db: Executor, postId: string, platformCommentId: string): Promise<CommentRow | undefined> {
  return db.selectFrom('comments').selectAll().where('post_id', '=', postId).where('platform_comment_id', '=', platformCommentId).executeTakeFirst();
}

export interface RefreshedComment {
  platformCommentId: string;
  platformParentId: string | null;
  author: { handle: string; displayName: string; platformId: string; avatarUrl: string | null };
  text: string;
  createdAt: Date;
  likes: number;
  replies: number;
  own: boolean;
}

/** A listed comment as a refresh stores it. */
export function toRefreshed(c: PlatformComment): RefreshedComment {
  const createdAt = new Date(c.createdAt);
  return { ...c, createdAt: Number.isNaN(createdAt.getTime()) ? new Date(0) : createdAt };
}

/**
 * Stores one page a refresh read. A comment already stored keeps its id (decisions.md "Comments"); its text, author
 * and counts follow the platform unless it is deleted (a deleted comment keeps its text exactly as last stored and is
 * never undeleted). `seenAt` marks it seen by this refresh. The comments this write inserts, other than the account's
 * own (Herald's replies and first comments are stored at once as own), are stored `unreported`, for the refresh's
 * `reportReceivedComments`: a comment is inserted once, so it is flagged once; an update leaves the flag as it is.
 */
export async function upsertRefreshedComments(
  db: Executor,
  post: { id: string; platform: PlatformSlug },
  comments: readonly RefreshedComment[],
  seenAt: Date,
): Promise<void> {
  if (comments.length === 0) return;
  // One platform page may repeat a comment (live feeds shift under paging); a statement may touch a row only once.
  const unique = [...new Map(comments.map((c) => [c.platformCommentId, c])).values()];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const keep = (column: string) => sql<any>`case when comments.deleted then comments.${sql.ref(column)} else excluded.${sql.ref(column)} end`;
  await db
    .insertInto('comments')
    .values(
      unique.map((c) => ({
        post_id: post.id,
        platform: post.platform,
        platform_comment_id: c.platformCommentId,
        platform_parent_id: c.platformParentId,
        author_handle: storable(c.author.handle),
        author_display_name: storable(c.author.displayName),
        author_platform_id: storable(c.author.platformId),
        author_avatar_url: storable(c.author.avatarUrl),
        text: storable(c.text),
        created_at: c.createdAt,
        likes: c.likes,
        replies: c.replies,
        own: c.own,
        unreported: !c.own,
        first_seen_at: seenAt,
        last_seen_at: seenAt,
        updated_at: seenAt,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['post_id', 'platform_comment_id']).doUpdateSet({
        text: keep('text'),
        author_handle: keep('author_handle'),
        author_display_name: keep('author_display_name'),
        author_avatar_url: keep('author_avatar_url'),
        likes: keep('likes'),
        replies: keep('replies'),
        own: sql`comments.own or excluded.own`,
        last_seen_at: seenAt,
        updated_at: seenAt,
      }),
    )
    .execute();
}

/**
 * Comments a refresh found listed but answered malformed (`listedComments` left them out): still on the platform, so
 * marked seen and not taken for deleted; nothing else about them changes.
 */
export async function markCommentsSeen(db: Executor, postId: string, platformCommentIds: readonly string[], seenAt: Date): Promise<void> {
  if (platformCommentIds.length === 0) return;
  await db.updateTable('comments').set({ last_seen_at: seenAt }).where('post_id', '=', postId).where('platform_comment_id', 'in', platformCommentIds).execute();
}

/**
 * Comments a refresh found listed without their replies (`UnreadableComments.subtrees`: a Bluesky reply answered
 * `blockedPost`/`notFoundPost`): each, and every stored comment under it at any depth, is marked seen, so a complete
 * read does not take them for deleted; nothing else about them changes.
 */
export async function markSubtreesSeen(db: Executor, postId: string, platformCommentIds: readonly string[], seenAt: Date): Promise<void> {
  if (platformCommentIds.length === 0) return;
  await sql`
    with recursive subtree(platform_comment_id) as (
      select unnest(${[...platformCommentIds]}::text[])
      union
      select c.platform_comment_id from comments c join subtree s on c.post_id = ${postId} and c.platform_parent_id = s.platform_comment_id
    )
    update comments set last_seen_at = ${seenAt}
    where post_id = ${postId} and platform_comment_id in (select platform_comment_id from subtree)`.execute(db);
}

/**
 * Comments a complete refresh that started at `refreshStart` did not see: gone from the platform. A comment the
 * service stored itself (`own`) less than `ownGraceMs` before is left alone, since platform listings can lag a fresh
 * write and a deletion is never undone. `createdAfter` limits it to comments the platform's listing still covers.
 */
export async function findUnseenComments(
  db: Executor,
  postId: string,
  refreshStart: Date,
  options: { ownGraceMs: number; createdAfter: Date | null },
): Promise<string[]> {
  let query = db
    .selectFrom('comments')
    .select('id')
    .where('post_id', '=', postId)
    .where('deleted', '=', false)
    .where('last_seen_at', '<', refreshStart)
    .where((eb) => eb.or([eb('own', '=', false), eb('first_seen_at', '<', new Date(refreshStart.getTime() - options.ownGraceMs))]));
  if (options.createdAfter) query = query.where('created_at', '>', options.createdAfter);
  return (await query.execute()).map((r) => r.id);
}

/** Whether any comment at all (hidden and deleted included) is stored for the post (sync rule 6). */
export async function hasStoredComments(db: Executor, postId: string): Promise<boolean> {
  return (await db.selectFrom('comments').select('id').where('post_id', '=', postId).limit(1).executeTakeFirst()) !== undefined;
}

/** Platform ids of the post's comments that some comment of it points at as its reply (`reply_comment_id`). */
export async function recordedReplyPlatformIds(db: Executor, postId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('comments as answered')
    .innerJoin('comments as reply', 'reply.id', 'answered.reply_comment_id')
    .select('reply.platform_comment_id')
    .where('answered.post_id', '=', postId)
    .execute();
  return new Set(rows.map((r) => r.platform_comment_id));
}

/** The platform ids of a thread's published parts, first part first (a part's comments are sorted against them). */
export async function threadPartPlatformIds(db: Executor, threadId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('posts')
    .select('platform_post_id')
    .where('thread_id', '=', threadId)
    .where('platform_post_id', 'is not', null)
    .orderBy('thread_order')
    .execute();
  return rows.map((r) => r.platform_post_id!);
}

/** The platform ids of every comment stored for the post, deleted ones included. */
export async function storedCommentPlatformIds(db: Executor, postId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('comments').select('platform_comment_id').where('post_id', '=', postId).execute();
  return new Set(rows.map((r) => r.platform_comment_id));
}

/** Which of `platformCommentIds` are stored for another part of the thread than `postId`. */
export async function storedOnOtherParts(db: Executor, threadId: string, postId: string, platformCommentIds: readonly string[]): Promise<Set<string>> {
  if (platformCommentIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('comments')
    .innerJoin('posts', 'posts.id', 'comments.post_id')
    .select('comments.platform_comment_id')
    .where('posts.thread_id', '=', threadId)
    .where('comments.post_id', '<>', postId)
    .where('comments.platform_comment_id', 'in', platformCommentIds)
    .execute();
  return new Set(rows.map((r) => r.platform_comment_id));
}

/**
 * Drops from a thread part's snapshot the comments a complete read found to be another part's (stored here before
 * Herald sorted a thread's listing by part): they are stored under the part they answer when it is refreshed.
 */
export async function removeCommentsOfOtherParts(db: Executor, postId: string, platformCommentIds: readonly string[]): Promise<void> {
  if (platformCommentIds.length === 0) return;
  await db.deleteFrom('comments').where('post_id', '=', postId).where('platform_comment_id', 'in', platformCommentIds).execute();
}
