import { graphPath, type GraphClient } from '../graph/client';
import { GraphFailure } from '../graph/errors';
import { readGraphInsights } from '../graph/insights';
import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PostMetrics } from '../types';

/**
 * Instagram media metrics (protocols.md section 12): `GET /{ig-media-id}/insights`. `views` replaced `impressions`
 * and `plays` (April 2025); for a video it is the video's views too. Unavailable data is left out of `data`: null.
 */
const INSTAGRAM_METRICS: MetricsMapping = {
  impressions: 'views',
  reach: 'reach',
  likes: 'likes',
  replies: 'comments',
  saves: 'saved',
  shares: 'shares',
  video_views: 'video_views',
};

/** The counts on the media object itself, for media Instagram shows no insights for. */
const INSTAGRAM_COUNT_METRICS: MetricsMapping = { likes: 'like_count', replies: 'comments_count' };

const INSIGHTS = ['views', 'reach', 'likes', 'comments', 'saved', 'shares'];

/**
 * Error (#10) "Not enough viewers for the media to show insights" is documented for media with too small an audience.
 * It shares code 10 with a missing permission, so only its documented wording tells the two apart.
 */
function tooFewViewers(err: unknown): boolean {
  return err instanceof GraphFailure && err.graphCode === 10 && /not enough viewers/i.test(err.detail?.body ?? '');
}

export async function readInstagramMetrics(client: GraphClient, req: MetricsRequest): Promise<PostMetrics> {
  try {
    const insights = await readGraphInsights(client, req.platformPostId, INSIGHTS);
    return mapMetrics(INSTAGRAM_METRICS, { ...insights, video_views: req.hasVideo ? insights.views : undefined });
  } catch (err) {
    if (!tooFewViewers(err)) throw err;
    const counts = await client.get<Record<string, unknown>>(graphPath(req.platformPostId), { fields: 'like_count,comments_count' }, 'metrics');
    return mapMetrics(INSTAGRAM_COUNT_METRICS, counts);
  }
}
