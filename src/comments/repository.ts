import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import type { CommentRow } from '../db/tables/comments';
import type { PlatformSlug } from '../platforms/types';

/**
 * Every write to `comments`, each a named statement (migration 0060). Both the sync (refreshes) and the comment
 * actions (reply, hide, delete, first comments) go through here. `deleted` only ever moves to true.
 */

type Executor = Db | Transaction<Database>;

/**
 * publishing-api.md "Comment flags": where deleting a comment takes its replies with it. On x, bluesky and mastodon
 * replies stay live (they are posts of their own); telegram reads no comments.
 */
export const repliesDeletedWithParent: Readonly<Record<PlatformSlug, boolean>> = {
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
}

/**
 * Stores a comment the service itself published (a reply, a first comment) at once with `own: true`
 * (decisions.md "Comments"). Idempotent on the platform id: a refresh that already stored it keeps its id.
 */
export async function insertOwnComment(db: Executor, input: OwnCommentInput): Promise<CommentRow> {
  return db
    .insertInto('comments')
    .values({
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
    })
    .onConflict((oc) => oc.columns(['post_id', 'platform_comment_id']).doUpdateSet({ own: true, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
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
  return 'isTransaction' in db && db.isTransaction ? run(db as Transaction<Database>) : (db as Db).transaction().execute(run);
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
