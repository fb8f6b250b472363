import { mapMetrics, type MetricsMapping } from '../metrics';
import { PlatformFailure, type MetricsRequest, type PlatformContext, type PostMetrics } from '../types';
import type { BlueskyClient } from './client';

/**
 * Bluesky post metrics (protocols.md section 12): the counts of `app.bsky.feed.defs#postView` from
 * `app.bsky.feed.getPosts`, read through the account's PDS (which proxies to the AppView). Every count is optional;
 * `bookmarkCount` only on newer AppViews. Bluesky has no impressions, reach or views.
 */
const BLUESKY_METRICS: MetricsMapping = {
  likes: 'likeCount',
  replies: 'replyCount',
  reposts: 'repostCount',
  quotes: 'quoteCount',
  bookmarks: 'bookmarkCount',
};

export async function readBlueskyMetrics(client: BlueskyClient, ctx: PlatformContext, req: MetricsRequest): Promise<PostMetrics> {
  const res = await client.run(ctx, (session) => session.agent.app.bsky.feed.getPosts({ uris: [req.platformPostId] }, { signal: req.signal }));
  // A deleted or unknown post is simply left out of `posts`.
  const post = res.data.posts.find((p) => p.uri === req.platformPostId);
  if (!post) throw new PlatformFailure('bluesky', 'gone', 'Bluesky no longer has this post.');
  return mapMetrics(BLUESKY_METRICS, post);
}
