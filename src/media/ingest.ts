import type { MediaOrigin } from '../db/tables/media';
import type { HttpClient } from '../net/http';
import type { PlanName } from '../plans';
import { downloadMedia } from './download';
import { checkMediaUrl } from './media-url';
import type { MediaRecord, MediaStore } from './store';

/**
 * A client's media URL made into stored media in one call: the URL check, the safe download, the checks on the real
 * bytes, and the store. The posts layer calls it for each `media_urls` entry of a scheduled post (publishing-api.md
 * "Media rules" 5) with `origin: 'url'`, so the copy can be removed after publishing with `deleteDownloadedCopies`.
 */
interface IngestDeps {
  store: MediaStore;
  http: HttpClient;
  allowInsecureUrls: boolean;
  maxBytes?: number;
  /** Whose limit `maxBytes` is (`downloadMedia`). */
  maxBytesOf?: string;
  timeoutMs?: number;
}

export async function ingestMediaUrl(deps: IngestDeps, input: { userId: string; url: string; origin: MediaOrigin; plan?: PlanName }): Promise<MediaRecord> {
  checkMediaUrl(input.url, { allowInsecure: deps.allowInsecureUrls });
  const { bytes, facts } = await downloadMedia(input.url, { http: deps.http, maxBytes: deps.maxBytes, maxBytesOf: deps.maxBytesOf, timeoutMs: deps.timeoutMs });
  return deps.store.store({ userId: input.userId, bytes, facts, origin: input.origin, sourceUrl: input.url, plan: input.plan });
}
