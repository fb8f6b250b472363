import type { AtpAgent } from '@atproto/api';
import { PlatformFailure, type MediaItem } from '../types';
import type { ImageEmbed } from './mapper';

/**
 * Images go up one by one with `com.atproto.repo.uploadBlob` (raw bytes); the post then references the blobs.
 * Every image carries `alt` (an empty string when the user gave none): the PDS refuses images without the key.
 * Blobs are content-addressed, so uploading the same bytes again on a retry makes nothing new.
 */
export async function uploadImages(agent: AtpAgent, media: MediaItem[]): Promise<ImageEmbed | undefined> {
  if (media.length === 0) return undefined;
  if (media.some((item) => item.kind !== 'image')) {
    throw new PlatformFailure('bluesky', 'permanent', 'Bluesky posts made through Herald take images only.');
  }
  const images: ImageEmbed['images'] = [];
  for (const item of media) {
    const uploaded = await agent.com.atproto.repo.uploadBlob(new Uint8Array(item.data), { encoding: item.mimeType });
    images.push({
      image: uploaded.data.blob,
      alt: item.alt ?? '',
      ...(item.width && item.height ? { aspectRatio: { width: item.width, height: item.height } } : {}),
    });
  }
  return { $type: 'app.bsky.embed.images', images };
}
