import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import { isUuid } from '../db/uuid';
import type { Logger } from '../logger';
import { type MediaRecord, type MediaStore, toMediaRecord } from '../media/store';
import { mediaStillWaiting, waitingPostNames } from './view-queries';

// Structural types, not the posts runtime's: the runtime removes the copies of posts it cancels (`cancel-scheduled.ts`).
type CleanupDeps = { db: Db; mediaStore: MediaStore };

/** The stored media ids a post publishes (downloaded copies of its URLs and uploads), in order. */
export function mediaIdsOf(row: Pick<PostRow, 'media'>): string[] {
  return (row.media ?? []).map((item) => item.media_id).filter((id): id is string => typeof id === 'string');
}

/**
 * Removes downloaded copies (origin `url`) among `mediaIds` that no other post still waiting to publish uses (a
 * fan-out shares one download between its accounts). Uploads are never removed. Returns how many went.
 */
export async function removeUnusedCopies(rt: CleanupDeps, mediaIds: readonly string[], exceptPostId: string): Promise<number> {
  if (mediaIds.length === 0) return 0;
  const keep = new Set(await mediaStillWaiting(rt.db, mediaIds, exceptPostId));
  return rt.mediaStore.deleteDownloadedCopies(mediaIds.filter((id) => !keep.has(id)));
}

/**
 * The copies downloaded for posts that will no longer publish (cancelled), unless another waiting post uses them.
 * A failure is logged: the cancellation it follows is committed, and a copy left behind only costs storage.
 */
export async function removeCopiesOfCancelled(rt: CleanupDeps & { logger: Logger }, postIds: readonly string[]): Promise<void> {
  if (postIds.length === 0) return;
  try {
    const rows = await rt.db.selectFrom('posts').select(['id', 'media']).where('id', 'in', postIds).execute();
    for (const row of rows) await removeUnusedCopies(rt, mediaIdsOf(row), row.id);
  } catch (err) {
    rt.logger.warn({ err, postIds }, 'could not remove the media copies of cancelled posts');
  }
}

/** No post of the media's owner still going to publish it (scheduled or publishing) names it; drafts do not count. */
function noWaitingPostUses(mediaId: Expression<string>, userId: Expression<string>): Expression<SqlBool> {
  return sql<SqlBool>`not ${waitingPostNames(mediaId, userId, { drafts: false })}`;
}

/**
 * DELETE /api/v1/media/:id: the upload leaves the user's media at once (404 to new posts, no longer counted in the
 * plan's storage). A scheduled post that uses it still publishes it: it becomes a copy like a downloaded one, removed
 * with the last post that uses it. A draft naming it is refused at promotion (`media_not_found`). Null when the user
 * keeps no such upload.
 */
export async function removeUpload(db: Db, userId: string, mediaId: string): Promise<MediaRecord | null> {
  if (!isUuid(mediaId)) return null;
  return db.transaction().execute(async (trx) => {
    const released = await trx
      .updateTable('media')
      .set({ origin: 'url' })
      .where('id', '=', mediaId)
      .where('user_id', '=', userId)
      .where('origin', '=', 'upload')
      .returningAll()
      .executeTakeFirst();
    if (!released) return null;
    await trx
      .deleteFrom('media')
      .where('id', '=', mediaId)
      .where(({ ref }) => noWaitingPostUses(ref('media.id'), ref('media.user_id')))
      .execute();
    return toMediaRecord(released);
  });
}

/** Older than any create still writing the post that names it (a download is cut off after a few minutes). */
const ORPHAN_AFTER = sql`interval '1 hour'`;

/**
 * The hourly sweep: copies (downloaded, or uploads removed while a post used them) that no scheduled or publishing
 * post names any more. The paths above remove them as posts publish or are cancelled; this catches what a crash
 * between a download and its post, a failed post or a removed draft left behind. Returns how many went.
 */
export async function removeOrphanedCopies(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('media')
    .where('origin', '=', 'url')
    .where('created_at', '<', sql<Date>`now() - ${ORPHAN_AFTER}`)
    .where(({ ref }) => noWaitingPostUses(ref('media.id'), ref('media.user_id')))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
