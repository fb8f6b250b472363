import type { PostsRuntime } from './runtime';
import { mediaIdsOf } from './publish-request';
import { mediaStillWaiting } from './view-queries';

/**
 * Removes downloaded copies (origin `url`) among `mediaIds` that no other post still waiting to publish uses (a
 * fan-out shares one download between its accounts). Uploads are never removed. Returns how many went.
 */
export async function removeUnusedCopies(rt: Pick<PostsRuntime, 'db' | 'mediaStore'>, mediaIds: readonly string[], exceptPostId: string): Promise<number> {
  if (mediaIds.length === 0) return 0;
  const stillNeeded = await mediaStillWaiting(rt.db, mediaIds, exceptPostId);
  const keep = new Set(stillNeeded.flatMap((other) => mediaIdsOf(other)));
  return rt.mediaStore.deleteDownloadedCopies(mediaIds.filter((id) => !keep.has(id)));
}
