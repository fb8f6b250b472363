import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../db';
import { inTransaction } from '../db/in-transaction';
import type { CommentRow } from '../db/tables/comments';
import type { PlatformSlug } from '../platforms/types';

/**
 * Writes to `comments`, each a named statement (migration 0060): the comment actions' (reply, hide, delete, first
 * comments) and what they share with the sync (the deletion cascade); the refresh's own writes are
 * `sync-repository.ts`'s. `deleted` only ever moves to true.
 */

export type Executor = Db | Transaction<Database>;

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
