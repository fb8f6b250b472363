import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PostMetrics } from '../types';
import type { MastodonClient } from './client';

/**
 * Mastodon post metrics (protocols.md section 12): the counts on the Status itself, `GET /api/v1/statuses/:id`.
 * `quotes_count` exists from Mastodon 4.5; older servers leave it out (null). No views, reach or bookmarks count.
 */
const MASTODON_METRICS: MetricsMapping = {
  likes: 'favourites_count',
  replies: 'replies_count',
  reposts: 'reblogs_count',
  quotes: 'quotes_count',
};

export async function readMastodonMetrics(client: MastodonClient, account: { origin: string; token: string }, req: MetricsRequest): Promise<PostMetrics> {
  const { body } = await client.send<Record<string, unknown>>(account.origin, account.token, {
    method: 'GET',
    path: `/api/v1/statuses/${encodeURIComponent(req.platformPostId)}`,
    signal: req.signal,
  });
  return mapMetrics(MASTODON_METRICS, body);
}
