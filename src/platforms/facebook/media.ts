import type { GraphClient } from '../graph/client';
import { graphPath } from '../graph/client';
import { capabilities } from '../capabilities';
import type { MediaItem } from '../types';

/**
 * Photos for feed posts and stories are uploaded unpublished (`published=false`): invisible until a feed post
 * attaches them (`attached_media`) or a story uses one (`photo_id`), so a repeated upload never shows twice.
 * Graph fetches `url` itself when the media layer has a public URL; otherwise the bytes go as multipart `source`.
 */
export async function uploadUnpublishedPhoto(client: GraphClient, pageId: string, item: MediaItem): Promise<string> {
  const fields = {
    published: 'false',
    url: item.publicUrl,
    // Graph's accessible description of a photo [doc: page/photos `alt_text_custom`].
    alt_text_custom: capabilities.facebook.altText ? item.alt : undefined,
  };
  const file = item.publicUrl ? undefined : { field: 'source', data: item.data, mimeType: item.mimeType };
  const res = await client.post<{ id: string }>(graphPath(pageId, 'photos'), fields, 'publish', { file });
  return res.id;
}
