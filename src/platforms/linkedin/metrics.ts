import { mapMetrics, type MetricsMapping } from '../metrics';
import { PlatformFailure, type MetricsRequest, type PostMetrics } from '../types';
import type { LinkedInClient } from './client';

/**
 * LinkedIn post metrics (protocols.md section 12). A Page post: `organizationalEntityShareStatistics` for the post
 * (organic, 12-month window), one call. A member post: `memberCreatorPostAnalytics`, one call per metric type with
 * `aggregation=TOTAL`. A LinkedIn reshare is a repost in the feed, so it fills `reposts`; quotes, bookmarks, saves
 * (POST_SAVE is newer than the documented list) and video views stay null.
 * Query strings are written by hand: Rest.li wants `List(...)` and `(share:...)` with literal parentheses around
 * encoded URNs, which a URL encoder would escape.
 */
const LINKEDIN_PAGE_METRICS: MetricsMapping = {
  impressions: 'impressionCount',
  reach: 'uniqueImpressionsCount',
  likes: 'likeCount',
  replies: 'commentCount',
  reposts: 'shareCount',
  clicks: 'clickCount',
};

const LINKEDIN_MEMBER_METRICS: MetricsMapping = {
  impressions: 'IMPRESSION',
  reach: 'MEMBERS_REACHED',
  likes: 'REACTION',
  replies: 'COMMENT',
  reposts: 'RESHARE',
};

const urnKinds: Record<string, { list: string; entity: string }> = {
  share: { list: 'shares', entity: 'share' },
  ugcPost: { list: 'ugcPosts', entity: 'ugc' },
};

function urnKindOf(postUrn: string) {
  const kind = urnKinds[/^urn:li:(\w+):/.exec(postUrn)?.[1] ?? ''];
  if (!kind) throw new PlatformFailure('linkedin', 'permanent', 'Herald does not recognise this LinkedIn post id.');
  return kind;
}

export async function readLinkedInMetrics(conn: { client: LinkedInClient; organizationId: string | undefined }, req: MetricsRequest): Promise<PostMetrics> {
  const { client, organizationId } = conn;
  const postUrn = req.platformPostId;
  const kind = urnKindOf(postUrn);
  if (organizationId) {
    const organization = encodeURIComponent(`urn:li:organization:${organizationId}`);
    const path = `/rest/organizationalEntityShareStatistics?q=organizationalEntity&organizationalEntity=${organization}&${kind.list}=List(${encodeURIComponent(postUrn)})`;
    const res = await client.send({ method: 'GET', path, action: 'metrics', signal: req.signal });
    const elements = (res.json as { elements?: Array<{ totalShareStatistics?: unknown }> } | undefined)?.elements ?? [];
    return mapMetrics(LINKEDIN_PAGE_METRICS, elements[0]?.totalShareStatistics);
  }
  const entity = `(${kind.entity}:${encodeURIComponent(postUrn)})`;
  const totals: Record<string, unknown> = {};
  await Promise.all(
    Object.values(LINKEDIN_MEMBER_METRICS).map(async (queryType) => {
      const path = `/rest/memberCreatorPostAnalytics?q=entity&entity=${entity}&queryType=${queryType}&aggregation=TOTAL`;
      const res = await client.send({ method: 'GET', path, action: 'metrics', signal: req.signal });
      totals[queryType] = (res.json as { elements?: Array<{ count?: unknown }> } | undefined)?.elements?.[0]?.count;
    }),
  );
  return mapMetrics(LINKEDIN_MEMBER_METRICS, totals);
}
