import { graphPath, type GraphClient } from '../graph/client';
import { GraphFailure } from '../graph/errors';
import { readGraphInsights } from '../graph/insights';
import { mapMetrics, type MetricsMapping } from '../metrics';
import type { MetricsRequest, PostMetrics } from '../types';
import { placementOf, type Placement } from './mapper';

/**
 * Instagram media metrics (protocols.md section 12): `GET /{ig-media-id}/insights`. `views` replaced `impressions`
 * and `plays` (April 2025); for a video it is the video's views too. Unavailable data is left out of `data`: null.
 * Graph refuses the whole call (#100 "does not support the ... metric for this media product type") when one metric
 * asked does not exist for the media's product type, so each placement asks its own set (README "### Analytics").
 */
interface InsightsSet {
  metrics: readonly string[];
  mapping: MetricsMapping;
}

/** Feed posts, carousels and reels (product types FEED and REELS). */
const FEED_INSIGHTS: InsightsSet = {
  metrics: ['views', 'reach', 'likes', 'comments', 'saved', 'shares'],
  mapping: { impressions: 'views', reach: 'reach', likes: 'likes', replies: 'comments', saves: 'saved', shares: 'shares', video_views: 'video_views' },
};

/** Stories (product type STORY): no likes, comments or saved; `replies` are the story's replies (direct messages). */
const STORY_INSIGHTS: InsightsSet = {
  metrics: ['views', 'reach', 'replies', 'shares'],
  mapping: { impressions: 'views', reach: 'reach', replies: 'replies', shares: 'shares', video_views: 'video_views' },
};

const insightsByPlacement: Record<Placement, InsightsSet> = { feed: FEED_INSIGHTS, reel: FEED_INSIGHTS, story: STORY_INSIGHTS };

/** The counts on the media object itself, for media Instagram shows no insights for. */
const INSTAGRAM_COUNT_METRICS: MetricsMapping = { likes: 'like_count', replies: 'comments_count' };

/**
 * Error (#10) "Not enough viewers for the media to show insights" is documented for media with too small an audience.
 * It shares code 10 with a missing permission, so only its documented wording tells the two apart.
 */
function tooFewViewers(err: unknown): boolean {
  return err instanceof GraphFailure && err.graphCode === 10 && /not enough viewers/i.test(err.detail?.body ?? '');
}

export async function readInstagramMetrics(client: GraphClient, req: MetricsRequest): Promise<PostMetrics> {
  try {
    const set = insightsByPlacement[placementOf({ placement: req.placement })];
    const insights = await readGraphInsights(client, req.platformPostId, set.metrics, req.signal);
    return mapMetrics(set.mapping, { ...insights, video_views: req.hasVideo ? insights.views : undefined });
  } catch (err) {
    if (!tooFewViewers(err)) throw err;
    const counts = await client.get<Record<string, unknown>>(graphPath(req.platformPostId), { fields: 'like_count,comments_count' }, 'metrics', req.signal);
    return mapMetrics(INSTAGRAM_COUNT_METRICS, counts);
  }
}
