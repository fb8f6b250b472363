import { sql } from 'kysely';
import type { PlatformComment, PlatformSlug } from '../platforms/types';
import type { Executor } from './repository';

/**
 * The refresh's writes to `comments` (`sync.ts`, `sync-thread-part.ts`), each a named statement: the pages it read,
 * what it saw listed malformed, what a complete read did not see, and a thread part's comments sorted out. The writes
 * the comment actions share with it (the deletion cascade, own comments) are `repository.ts`'s.
 */

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

interface RefreshedComment {
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
