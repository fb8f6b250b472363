import type { GraphClient } from '../graph/client';
import { readGraphInsights } from '../graph/insights';
import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PostMetrics } from '../types';

/**
 * Instagram media metrics (protocols.md section 12): `GET /{ig-media-id}/insights`. `views` replaced `impressions`
 * and `plays` (April 2025); for a video it is the video's views too. Unavailable data is left out of `data`: null.
 */
export const INSTAGRAM_METRICS: MetricsMapping = {
  impressions: 'views',
  reach: 'reach',
  likes: 'likes',
  replies: 'comments',
  saves: 'saved',
  shares: 'shares',
  video_views: 'video_views',
};

const INSIGHTS = ['views', 'reach', 'likes', 'comments', 'saved', 'shares'];

export async function readInstagramMetrics(client: GraphClient, req: MetricsRequest): Promise<PostMetrics> {
  const insights = await readGraphInsights(client, req.platformPostId, INSIGHTS);
  return mapMetrics(INSTAGRAM_METRICS, { ...insights, video_views: req.hasVideo ? insights.views : undefined });
}
