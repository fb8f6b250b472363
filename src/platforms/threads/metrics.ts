import type { GraphClient } from '../graph/client';
import { readGraphInsights } from '../graph/insights';
import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PostMetrics } from '../types';

/**
 * Threads media metrics (protocols.md section 12): `GET /{threads-media-id}/insights`. For a reply, `replies` counts
 * direct replies only (the platform's rule). No reach, bookmarks, saves or clicks.
 */
const THREADS_METRICS: MetricsMapping = {
  impressions: 'views',
  likes: 'likes',
  replies: 'replies',
  reposts: 'reposts',
  quotes: 'quotes',
  shares: 'shares',
};

const INSIGHTS = ['views', 'likes', 'replies', 'reposts', 'quotes', 'shares'];

export async function readThreadsMetrics(client: GraphClient, req: MetricsRequest): Promise<PostMetrics> {
  return mapMetrics(THREADS_METRICS, await readGraphInsights(client, req.platformPostId, INSIGHTS, req.signal));
}
