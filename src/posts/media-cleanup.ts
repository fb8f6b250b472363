import type { Db } from '../db';
import type { PostRow } from '../db/tables/posts';
import type { Logger } from '../logger';
import type { MediaStore } from '../media/store';
import { mediaStillWaiting } from './view-queries';

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
  const stillNeeded = await mediaStillWaiting(rt.db, mediaIds, exceptPostId);
  const keep = new Set(stillNeeded.flatMap((other) => mediaIdsOf(other)));
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
