import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PlatformContext, PostMetrics } from '../types';
import type { XClient } from './client';

/**
 * X post metrics (protocols.md section 12): `GET /2/tweets/:id` with public and non-public metrics, and for a video
 * post the video's own view count. Non-public metrics exist only for the account's own posts of the last 30 days;
 * X then still answers 200 with the public ones and an `errors[]` entry, so clicks become null.
 */
const X_METRICS: MetricsMapping = {
  impressions: 'public_metrics.impression_count',
  likes: 'public_metrics.like_count',
  replies: 'public_metrics.reply_count',
  reposts: 'public_metrics.retweet_count',
  quotes: 'public_metrics.quote_count',
  bookmarks: 'public_metrics.bookmark_count',
  clicks: 'non_public_metrics.url_link_clicks',
  video_views: 'video.view_count',
};

interface XMetricsAnswer {
  data: { public_metrics?: Record<string, number>; non_public_metrics?: Record<string, number> };
  includes?: { media?: Array<{ type?: string; public_metrics?: { view_count?: number } }> };
}

export async function readXMetrics(client: XClient, ctx: PlatformContext, req: MetricsRequest): Promise<PostMetrics> {
  const answer = await client.send<XMetricsAnswer>(ctx.credentials, {
    method: 'GET',
    path: `/2/tweets/${encodeURIComponent(req.platformPostId)}`,
    query: {
      'tweet.fields': 'public_metrics,non_public_metrics',
      ...(req.hasVideo ? { expansions: 'attachments.media_keys', 'media.fields': 'type,public_metrics' } : {}),
    },
    signal: req.signal,
  });
  const video = answer.includes?.media?.find((m) => m.type === 'video');
  return mapMetrics(X_METRICS, { ...answer.data, video: req.hasVideo ? video?.public_metrics : undefined });
}
