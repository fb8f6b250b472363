import type { PostRow } from '../db/tables/posts';
import { DEFAULT_MEDIA_URL_TTL_MS, toMediaItems } from '../media';
import type { PublishRequest } from '../platforms/types';
import type { PostsRuntime } from './runtime';

export { mediaIdsOf } from './media-cleanup';

/**
 * What the adapter receives for a post, read at publish time (an edit made while it waited is what goes out): its
 * text, its stored media with alt text and a signed public URL (for platforms that fetch media), its block.
 */
export async function publishRequestFor(rt: PostsRuntime, row: PostRow): Promise<PublishRequest> {
  const attachments = [];
  for (const item of row.media ?? []) {
    if (!item.media_id) continue;
    attachments.push({ media: await rt.mediaStore.loadForUser(row.user_id, item.media_id), alt: item.alt ?? null });
  }
  const expiresAt = new Date(rt.now().getTime() + DEFAULT_MEDIA_URL_TTL_MS);
  const request: PublishRequest = {
    postId: row.id,
    text: row.text,
    media: toMediaItems(attachments, (id) => rt.mediaUrls.signMediaUrl(id, expiresAt)),
  };
  if (row.configuration !== null && Object.keys(row.configuration).length > 0) request.configuration = row.configuration;
  return request;
}
