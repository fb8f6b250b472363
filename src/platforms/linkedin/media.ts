import { PlatformFailure, type MediaItem } from '../types';
import type { LinkedInClient } from './client';
import type { UploadedImage } from './mapper';

/**
 * Images API: `initializeUpload` for the author, then PUT the bytes to the returned absolute `uploadUrl`, used
 * verbatim. An uploaded image is invisible until a post names its URN, so a repeated upload never shows twice.
 */
export async function uploadImage(client: LinkedInClient, owner: string, item: MediaItem): Promise<UploadedImage> {
  const init = await client.send({ method: 'POST', path: '/rest/images', query: { action: 'initializeUpload' }, json: { initializeUploadRequest: { owner } }, action: 'publish' });
  const value = (init.json as { value?: { uploadUrl?: string; image?: string } } | undefined)?.value;
  if (!value?.uploadUrl || !value.image) {
    throw new PlatformFailure('linkedin', 'retryable', 'LinkedIn gave an unusable answer to the image upload; nothing was published.', undefined, { status: init.status, body: init.text.slice(0, 2000) });
  }
  await client.send({ method: 'PUT', url: value.uploadUrl, body: item.data, headers: { 'content-type': item.mimeType }, action: 'publish' });
  return { urn: value.image, alt: item.alt };
}
