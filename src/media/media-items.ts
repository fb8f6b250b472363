import type { MediaItem } from '../platforms/types';
import type { StoredMedia } from './store';

/** One stored file as a post uses it, with the `alt` its `media` entry gave (publishing-api.md "Media rules" 3). */
interface MediaAttachment {
  media: StoredMedia;
  alt?: string | null;
}

/**
 * What adapters receive: checked bytes and their facts, the alt text when there is one, and, when `publicUrlFor`
 * is given, a signed public URL for platforms that fetch media themselves.
 */
export function toMediaItems(attachments: readonly MediaAttachment[], publicUrlFor?: (mediaId: string) => string): MediaItem[] {
  return attachments.map(({ media, alt }) => {
    const item: MediaItem = { data: media.bytes, mimeType: media.mimeType, kind: media.kind };
    const text = alt?.trim();
    if (text) item.alt = text;
    if (media.width !== null) item.width = media.width;
    if (media.height !== null) item.height = media.height;
    if (media.durationMs !== null) item.durationMs = media.durationMs;
    if (publicUrlFor) item.publicUrl = publicUrlFor(media.id);
    return item;
  });
}
