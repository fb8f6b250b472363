import { FormData } from '../../net/http';
import { PlatformFailure, type MediaItem } from '../types';
import type { MastodonClient } from './client';
import type { MastodonMedia } from './mapper';
import { pauseUnlessStopped } from '../send-stop';

/**
 * Media v2 upload: 200 when processed at once (images), 202 with `url: null` while the server transcodes; then
 * `GET /api/v1/media/:id` answers 206 until done and 200 after (protocols.md section 3). The wait is bounded to
 * one minute (publishing-api.md media rule 6) on the injected clock.
 */

const PROCESSING_LIMIT_MS = 60_000;
const POLL_INTERVAL_MS = 2_000;

interface MastodonMediaDeps {
  client: MastodonClient;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
}

function fileName(item: MediaItem): string {
  const ext = item.mimeType.split('/')[1]?.replace('quicktime', 'mov').replace('jpeg', 'jpg') ?? 'bin';
  return `media.${ext}`;
}

/** `stop`: the call's `PublishRequest.signal`, which ends the processing wait (`pauseUnlessStopped`). */
export async function uploadMedia(deps: MastodonMediaDeps, origin: string, token: string, item: MediaItem, stop?: AbortSignal): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(item.data)], { type: item.mimeType }), fileName(item));
  if (item.alt) form.append('description', item.alt);
  const uploaded = await deps.client.send<MastodonMedia>(origin, token, { method: 'POST', path: '/api/v2/media', multipart: form, scope: 'media' });
  if (uploaded.status === 200 && uploaded.body.url) return uploaded.body.id;

  const deadline = deps.now().getTime() + PROCESSING_LIMIT_MS;
  for (;;) {
    if (deps.now().getTime() >= deadline) {
      throw new PlatformFailure(
        'mastodon',
        'permanent',
        `Mastodon is still processing the ${item.kind}; nothing was published. Send the same request again.`,
      );
    }
    await pauseUnlessStopped('mastodon', deps.sleep, POLL_INTERVAL_MS, stop);
    const polled = await deps.client.send<MastodonMedia>(origin, token, { method: 'GET', path: `/api/v1/media/${uploaded.body.id}`, scope: 'media' });
    if (polled.status === 200 && polled.body.url) return polled.body.id;
  }
}
