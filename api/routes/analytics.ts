import { z } from 'zod';
import { getPostAnalytics, type AnalyticsResult } from '../../src/analytics/service';
import { ApiError } from '../../src/errors';
import { platformName } from '../../src/platforms/availability';
import { metricKeys, platformSlugs, type PlatformFailureKind } from '../../src/platforms/types';
import type { AppDeps } from '../deps';
import { defineRoute } from '../route';
import { idParams, queryBoolean } from '../validation';
import { postsRuntimeOf } from './posts';

const MetricsSchema = z.object(
  Object.fromEntries(metricKeys.map((key) => [key, z.number().int().nullable()])) as Record<(typeof metricKeys)[number], z.ZodNullable<z.ZodNumber>>,
).meta({ description: 'Every key is present: an integer, or null where the platform does not report it for this post' });

const PostAnalyticsSchema = z.object({
  post_id: z.string(),
  platform: z.enum(platformSlugs),
  platform_post_id: z.string(),
  metrics: MetricsSchema,
  synced_at: z.string().meta({ description: 'When Herald read these numbers from the platform' }),
  next_refresh_after: z.string().meta({ description: '`refresh=true` before this time is 429 `analytics_refresh_rate_limited`' }),
});

/** What a client reads when the platform refused or failed: one short sentence naming the platform, never its body. */
const failureMessages: Record<PlatformFailureKind, (name: string) => string> = {
  rate_limited: (p) => `${p} is rate limiting this account's reads; try again later.`,
  reauthorize: (p) => `${p} refused to give this post's analytics: the connection lacks the permission or was revoked; reconnect the account.`,
  gone: (p) => `${p} no longer has this post.`,
  retryable: (p) => `${p} could not give this post's analytics right now; try again later.`,
  unknown_outcome: (p) => `${p} did not answer in time; try again later.`,
  permanent: (p) => `${p} refused to give this post's analytics.`,
};

/** Why a platform read is refused inside the 5-minute floor, each true to what happened. */
const tooSoonMessages: Record<Extract<AnalyticsResult, { kind: 'refresh_too_soon' }>['reason'], (postId: string, seconds: number) => string> = {
  recent_read: (id, s) => `Analytics of post ${id} were read from the platform less than 5 minutes ago; refresh again in ${s} seconds.`,
  in_flight: (id, s) => `Analytics of post ${id} are being read from the platform right now; refresh again in ${s} seconds.`,
  failed_read: (id, s) => `The last read of post ${id}'s analytics from the platform failed, and it counts as a read: the platform can be asked again in ${s} seconds.`,
};

function answer(result: AnalyticsResult, postId: string) {
  switch (result.kind) {
    case 'ok':
      return { status: 200, body: { data: result.analytics } };
    case 'not_published':
      throw new ApiError('bad_request', `Post ${postId} is ${result.status}: analytics exist once the post is published.`);
    case 'no_platform_analytics':
      throw new ApiError('upstream_error', `${platformName(result.platform)} has no post analytics: its API does not report a post's views or reactions.`);
    // publishing-api.md "Errors": "account not found or not active" is 404; decisions.md gives 400 only to a post not published.
    case 'account_disconnected':
      throw new ApiError('not_found', `The ${platformName(result.platform)} account of post ${postId} was disconnected: Herald can no longer read its analytics.`);
    case 'refresh_too_soon':
      throw new ApiError('analytics_refresh_rate_limited', tooSoonMessages[result.reason](postId, result.retryAfterSeconds), {}, { 'Retry-After': String(result.retryAfterSeconds) });
    case 'concurrent_read_failed':
      throw new ApiError('upstream_error', `${platformName(result.platform)} did not give this post's analytics to the request reading them at the same time; try again later.`);
    case 'read_still_in_flight':
      throw new ApiError(
        'upstream_error',
        `${platformName(result.platform)} has not answered Herald's read of this post's analytics yet; try again in ${result.retryAfterSeconds} seconds.`,
        {},
        { 'Retry-After': String(result.retryAfterSeconds) },
      );
    case 'platform_failed': {
      const { failure } = result;
      const wait = failure.kind === 'rate_limited' && failure.retryAfterSeconds !== undefined ? { 'Retry-After': String(failure.retryAfterSeconds) } : undefined;
      throw new ApiError('upstream_error', failureMessages[failure.kind](platformName(failure.platform)), {}, wait);
    }
  }
}

function analyticsDeps(deps: AppDeps) {
  const rt = postsRuntimeOf(deps);
  return { db: deps.db, logger: deps.logger, adapters: rt.adapters, sealedBox: rt.sealedBox, now: rt.now };
}

export const analyticsRoutes = [
  defineRoute({
    method: 'get',
    path: '/analytics/posts/:id',
    summary: "A published post's analytics",
    description:
      "The platform's own numbers for one published post, from the stored snapshot. The first request for a post reads the platform; `refresh=true` reads it again, at most once every 5 minutes per post (a read that failed counts: 429 until the floor passes). Costs no quota. Telegram reports no post analytics (502).",
    tags: ['Analytics'],
    scope: 'posts:read',
    params: idParams,
    query: z.strictObject({ refresh: queryBoolean.optional().meta({ description: 'Read the platform again now (default false)' }) }),
    responses: { 200: { description: 'The snapshot', schema: z.object({ data: PostAnalyticsSchema }) } },
    errors: ['not_found', 'analytics_refresh_rate_limited', 'upstream_error'],
    handler: async ({ params, query, auth, deps }) => {
      const result = await getPostAnalytics(analyticsDeps(deps), auth.userId, params.id, { refresh: query.refresh === true });
      return answer(result, params.id);
    },
  }),
];
