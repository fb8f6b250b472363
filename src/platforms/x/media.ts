import { FormData } from '../../net/http';
import { PlatformFailure, type AccountCredentials, type MediaItem } from '../types';
import type { XClient } from './client';
import { pauseUnlessStopped } from '../send-stop';

/**
 * X media upload v2 (protocols.md section 1): images in one multipart request, video in chunks
 * (initialize → append… → finalize), then STATUS polling while X processes, then alt text via the metadata endpoint.
 */

export const X_CHUNK_BYTES = 4 * 1024 * 1024;
/** X names its own wait (`check_after_secs`); the count bounds the whole wait. */
const MAX_STATUS_POLLS = 60;

interface ProcessingInfo {
  state: 'pending' | 'in_progress' | 'failed' | 'succeeded';
  check_after_secs?: number;
}

interface MediaData {
  data: { id: string; media_key?: string; processing_info?: ProcessingInfo };
}

interface XMediaDeps {
  client: XClient;
  sleep: (ms: number) => Promise<void>;
  chunkBytes: number;
}

function category(item: MediaItem): string {
  if (item.kind === 'video') return 'tweet_video';
  return item.mimeType === 'image/gif' ? 'tweet_gif' : 'tweet_image';
}

function blobOf(data: Buffer, mimeType: string): Blob {
  return new Blob([new Uint8Array(data)], { type: mimeType });
}

async function uploadSimple(deps: XMediaDeps, creds: AccountCredentials, item: MediaItem): Promise<MediaData> {
  const form = new FormData();
  form.append('media', blobOf(item.data, item.mimeType), 'media');
  form.append('media_category', category(item));
  return deps.client.send<MediaData>(creds, { method: 'POST', path: '/2/media/upload', multipart: form, scope: 'media' });
}

async function uploadChunked(deps: XMediaDeps, creds: AccountCredentials, item: MediaItem): Promise<MediaData> {
  const init = await deps.client.send<MediaData>(creds, {
    method: 'POST',
    path: '/2/media/upload/initialize',
    json: { media_type: item.mimeType, total_bytes: item.data.length, media_category: category(item) },
    scope: 'media',
  });
  const id = init.data.id;
  for (let offset = 0, segment = 0; offset < item.data.length; offset += deps.chunkBytes, segment += 1) {
    const form = new FormData();
    form.append('media', blobOf(item.data.subarray(offset, offset + deps.chunkBytes), 'application/octet-stream'), 'chunk');
    form.append('segment_index', String(segment));
    await deps.client.send(creds, { method: 'POST', path: `/2/media/upload/${id}/append`, multipart: form, scope: 'media' });
  }
  return deps.client.send<MediaData>(creds, { method: 'POST', path: `/2/media/upload/${id}/finalize`, scope: 'media' });
}

async function waitUntilProcessed(deps: XMediaDeps, creds: AccountCredentials, uploaded: MediaData, kind: MediaItem['kind'], stop: AbortSignal | undefined): Promise<void> {
  let info = uploaded.data.processing_info;
  for (let poll = 0; info && info.state !== 'succeeded'; poll += 1) {
    if (info.state === 'failed') {
      throw new PlatformFailure('x', 'permanent', `X could not process the ${kind}; nothing was published.`);
    }
    if (poll >= MAX_STATUS_POLLS) {
      throw new PlatformFailure('x', 'permanent', `X is still processing the ${kind}; nothing was published. Send the same request again.`);
    }
    await pauseUnlessStopped('x', deps.sleep, Math.max(1, info.check_after_secs ?? 1) * 1000, stop);
    const status = await deps.client.send<MediaData>(creds, {
      method: 'GET',
      path: '/2/media/upload',
      query: { command: 'STATUS', media_id: uploaded.data.id },
      scope: 'media',
    });
    info = status.data.processing_info;
  }
}

/** Uploads one item and returns X's media id, ready to attach; its processing wait ends with `stop` (`PublishRequest.signal`). */
export async function uploadMedia(deps: XMediaDeps, creds: AccountCredentials, item: MediaItem, stop?: AbortSignal): Promise<string> {
  const uploaded = item.kind === 'video' ? await uploadChunked(deps, creds, item) : await uploadSimple(deps, creds, item);
  await waitUntilProcessed(deps, creds, uploaded, item.kind, stop);
  if (item.alt) {
    await deps.client.send(creds, {
      method: 'POST',
      path: '/2/media/metadata',
      json: { id: uploaded.data.id, metadata: { alt_text: { text: item.alt } } },
      scope: 'media',
    });
  }
  return uploaded.data.id;
}
