import { graphPath, type GraphClient } from '../graph/client';
import { readGraphInsights } from '../graph/insights';
import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PostMetrics } from '../types';
import { placementOf } from './mapper';

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

/**
 * Page stories (`photo_stories`): no source at hand documents a number for one. The Stories API publishes a story and
 * lists a Page's stories (`GET /{page-id}/stories`: post_id, status, creation_time, media_type, media_id, url), nothing
 * more; the Page post counts and `post_*` insights above are documented for feed posts (protocols.md section 12). So a
 * story answers the contract's "not reported for this post" for every key, and Graph is not asked: reading it like a
 * feed post reported a story's counts as a feed post's, or failed (a 502 for what the platform simply does not give).
 */
const FACEBOOK_STORY_METRICS: MetricsMapping = {};

const COUNT_FIELDS = 'shares,reactions.summary(total_count).limit(0),comments.summary(true).limit(0)';
const INSIGHTS = ['post_media_view', 'post_total_media_view_unique', 'post_clicks'];

export async function readFacebookMetrics(client: GraphClient, req: MetricsRequest): Promise<PostMetrics> {
  if (placementOf({ placement: req.placement }) === 'story') return mapMetrics(FACEBOOK_STORY_METRICS, {});
  const counts = await client.get<{ shares?: { count?: number } }>(graphPath(req.platformPostId), { fields: COUNT_FIELDS }, 'metrics', req.signal);
  const insights = await readGraphInsights(client, req.platformPostId, req.hasVideo ? [...INSIGHTS, 'post_video_views'] : INSIGHTS, req.signal);
  // Facebook leaves `shares` out when nobody shared: that is a reported 0, not an unknown.
  return mapMetrics(FACEBOOK_METRICS, { counts: { ...counts, shares: { count: counts.shares?.count ?? 0 } }, insights });
}
