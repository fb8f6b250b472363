import { graphPath, type GraphClient } from '../graph/client';
import { readGraphInsights } from '../graph/insights';
import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PostMetrics } from '../types';

/**
 * Facebook Page post metrics (protocols.md section 12): the counts on the post (reactions, comments, shares) and the
 * post's insights. Impressions metrics are gone since November 2025 ("replaced by views"), so impressions and reach
 * are the media views metrics; video views are asked for video posts only.
 */
const FACEBOOK_METRICS: MetricsMapping = {
  likes: 'counts.reactions.summary.total_count',
  replies: 'counts.comments.summary.total_count',
  shares: 'counts.shares.count',
  impressions: 'insights.post_media_view',
  reach: 'insights.post_total_media_view_unique',
  clicks: 'insights.post_clicks',
  video_views: 'insights.post_video_views',
};

const COUNT_FIELDS = 'shares,reactions.summary(total_count).limit(0),comments.summary(true).limit(0)';
const INSIGHTS = ['post_media_view', 'post_total_media_view_unique', 'post_clicks'];

export async function readFacebookMetrics(client: GraphClient, req: MetricsRequest): Promise<PostMetrics> {
  const counts = await client.get<{ shares?: { count?: number } }>(graphPath(req.platformPostId), { fields: COUNT_FIELDS }, 'metrics');
  const insights = await readGraphInsights(client, req.platformPostId, req.hasVideo ? [...INSIGHTS, 'post_video_views'] : INSIGHTS);
  // Facebook leaves `shares` out when nobody shared: that is a reported 0, not an unknown.
  return mapMetrics(FACEBOOK_METRICS, { counts: { ...counts, shares: { count: counts.shares?.count ?? 0 } }, insights });
}
