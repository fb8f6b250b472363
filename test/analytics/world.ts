/**
 * Analytics tests' world: the real API (real database, real adapters) over the eight platform stand-ins, with a
 * clock the test moves (`world.clock.advance(ms)`), and published posts made for real on a stand-in and recorded
 * as published rows of the API user (no workflow needed: analytics read only published rows).
 *
 *   const world = await startAnalyticsWorld()        (in `before`; `world.stop()` in `after`)
 *   const post = await world.publish('x')             → { postId, platformPostId, accountId }
 *   world.analytics(postId, { refresh?, key? })       → TestResponse of GET /api/v1/analytics/posts/:id
 *   world.reads('x')                                   → how many metrics reads the X stand-in has answered
 */
import { randomUUID } from 'node:crypto';
import type { PostStatus, StoredMediaRef } from '../../src/db/tables/posts';
import type { PlatformContext, PlatformSlug } from '../../src/platforms/types';
import { startApi } from '../helpers/api';
import { startPlatformStandIns } from '../helpers/platform-standins';
import { insertAccount, testSealedBox } from '../posts/fixtures';

type MetricsPlatform = Exclude<PlatformSlug, 'telegram'> | 'linkedin_member';

/** Each stand-in's metrics endpoint, to count the reads that reached the platform. */
const metricsPaths: Record<MetricsPlatform, { standIn: Exclude<PlatformSlug, 'telegram'>; path: RegExp }> = {
  x: { standIn: 'x', path: /^\/2\/tweets\/\d+$/ },
  bluesky: { standIn: 'bluesky', path: /^\/xrpc\/app\.bsky\.feed\.getPosts$/ },
  mastodon: { standIn: 'mastodon', path: /^\/api\/v1\/statuses\/\d+$/ },
  facebook: { standIn: 'facebook', path: /\/insights$/ },
  instagram: { standIn: 'instagram', path: /\/insights$/ },
  threads: { standIn: 'threads', path: /\/insights$/ },
  linkedin: { standIn: 'linkedin', path: /^\/rest\/organizationalEntityShareStatistics$/ },
  linkedin_member: { standIn: 'linkedin', path: /^\/rest\/memberCreatorPostAnalytics$/ },
};

interface PublishedFixture {
  postId: string;
  platformPostId: string;
  accountId: string;
}

export async function startAnalyticsWorld() {
  const standIns = await startPlatformStandIns();
  let nowMs = Date.parse('2026-11-23T12:00:00Z');
  const clock = { now: () => new Date(nowMs), advance: (ms: number) => void (nowMs += ms) };
  const api = await startApi({ plan: 'scale', deps: { adapters: standIns.adapters, sealedBox: testSealedBox, posts: { now: clock.now } } });
  const accounts = new Map<MetricsPlatform, { accountId: string; ctx: PlatformContext }>();

  function contextFor(platform: MetricsPlatform | 'telegram'): { ctx: PlatformContext; platformAccountId: string; username: string } {
    const s = standIns;
    switch (platform) {
      case 'x': {
        const token = `token-${randomUUID()}`;
        const user = s.x.addUser({ username: `user${Math.floor(Math.random() * 1e9)}`, bearerToken: token });
        return { ctx: { credentials: { access_token: token }, settings: { user_id: user.id, username: user.username } }, platformAccountId: user.id, username: user.username };
      }
      case 'bluesky': {
        const handle = `u${Math.floor(Math.random() * 1e9)}.test`;
        const account = s.bluesky.addAccount({ handle, appPassword: 'abcd-efgh-ijkl-mnop' });
        return { ctx: { credentials: { handle, app_password: 'abcd-efgh-ijkl-mnop', service_url: s.bluesky.origin }, settings: {} }, platformAccountId: account.did, username: handle };
      }
      case 'mastodon': {
        const token = `token-${randomUUID()}`;
        const account = s.mastodon.addAccount(`user${Math.floor(Math.random() * 1e9)}`, { token });
        return { ctx: { credentials: { access_token: token }, settings: { instance_origin: s.mastodon.origin, account_id: account.id, username: account.username } }, platformAccountId: account.id, username: account.username };
      }
      case 'facebook':
        return { ctx: { credentials: { page_id: s.facebook.page.id, access_token: s.facebook.page.token }, settings: {} }, platformAccountId: s.facebook.page.id, username: s.facebook.page.username };
      case 'instagram':
        return { ctx: { credentials: { access_token: s.instagram.user.igToken }, settings: { igUserId: s.instagram.user.igUserId, via: 'instagram' } }, platformAccountId: s.instagram.user.igUserId, username: s.instagram.user.username };
      case 'threads':
        return { ctx: { credentials: { access_token: s.threads.user.token }, settings: { threadsUserId: s.threads.user.id } }, platformAccountId: s.threads.user.id, username: s.threads.user.username };
      case 'linkedin':
        return { ctx: { credentials: { access_token: s.linkedin.member.token, organization_id: String(s.linkedin.organization.id) }, settings: {} }, platformAccountId: String(s.linkedin.organization.id), username: 'herald-inc' };
      case 'linkedin_member':
        return { ctx: { credentials: { access_token: s.linkedin.member.token }, settings: { authorUrn: s.linkedin.personUrn() } }, platformAccountId: s.linkedin.member.sub, username: 'ada' };
      case 'telegram':
        return { ctx: { credentials: { bot_token: '123:abc', chat_id: '@herald' }, settings: {} }, platformAccountId: '@herald', username: 'herald' };
    }
  }

  const slugOf = (platform: MetricsPlatform | 'telegram'): PlatformSlug => (platform === 'linkedin_member' ? 'linkedin' : platform);

  async function connect(platform: MetricsPlatform | 'telegram', userId = api.userId) {
    const { ctx, platformAccountId, username } = contextFor(platform);
    const row = await insertAccount(api.deps.db, userId, {
      platform: slugOf(platform), platform_account_id: platformAccountId, username, credentials: ctx.credentials as Record<string, string>, settings: ctx.settings,
    });
    return { accountId: row.id, ctx };
  }

  async function accountFor(platform: MetricsPlatform) {
    let account = accounts.get(platform);
    if (!account) {
      account = await connect(platform);
      accounts.set(platform, account);
    }
    return account;
  }

  /** A post row of the user in any status, as the posts feature writes it once published. */
  async function insertPost(row: {
    userId?: string; accountId: string; platform: PlatformSlug; status: PostStatus; platformPostId: string | null; media?: StoredMediaRef[]; configuration?: Record<string, unknown>;
  }): Promise<string> {
    const inserted = await api.deps.db
      .insertInto('posts')
      .values({
        user_id: row.userId ?? api.userId, account_id: row.accountId, platform: row.platform, text: 'Numbers, please', status: row.status,
        platform_post_id: row.platformPostId, published_at: row.status === 'published' ? clock.now() : null, media: row.media ? JSON.stringify(row.media) : null,
        configuration: row.configuration ? JSON.stringify(row.configuration) : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return inserted.id;
  }

  const image = { data: Buffer.from('jpeg'), mimeType: 'image/jpeg', kind: 'image' as const, publicUrl: 'https://cdn.example/1.jpg' };
  const video = { data: Buffer.alloc(2048, 1), mimeType: 'video/mp4', kind: 'video' as const, publicUrl: 'https://cdn.example/clip.mp4', durationMs: 5000, width: 640, height: 360 };

  return {
    api,
    standIns,
    clock,
    connect,
    insertPost,
    /** Publishes on the platform's stand-in through the real adapter and records the published row. */
    async publish(platform: MetricsPlatform, options: { media?: StoredMediaRef[]; video?: boolean; configuration?: Record<string, unknown> } = {}): Promise<PublishedFixture> {
      const { accountId, ctx } = await accountFor(platform);
      const slug = slugOf(platform);
      const media = options.video ? [video] : slug === 'instagram' || options.configuration?.placement === 'story' ? [image] : [];
      const published = await standIns.adapters[slug].publish(ctx, { postId: randomUUID(), text: `Numbers ${randomUUID()}`, media, configuration: options.configuration });
      const postId = await insertPost({ accountId, platform: slug, status: 'published', platformPostId: published.platformPostId, media: options.media, configuration: options.configuration });
      return { postId, platformPostId: published.platformPostId, accountId };
    },
    /** The account `publish` posts with, as the adapter reads it (to call an adapter directly). */
    async contextOf(platform: MetricsPlatform): Promise<PlatformContext> {
      return (await accountFor(platform)).ctx;
    },
    analytics(postId: string, options: { refresh?: boolean; key?: string } = {}) {
      return api.request('GET', `/api/v1/analytics/posts/${postId}${options.refresh ? '?refresh=true' : ''}`, options.key ? { key: options.key } : {});
    },
    reads(platform: MetricsPlatform): number {
      const { standIn, path } = metricsPaths[platform];
      return standIns[standIn].standIn.calls('GET', path).length;
    },
    async stop() {
      await api.close();
      await standIns.stop();
    },
  };
}

export type AnalyticsWorld = Awaited<ReturnType<typeof startAnalyticsWorld>>;

/** The 11 keys, every one null unless given. */
export function metrics(values: Partial<Record<string, number>>): Record<string, number | null> {
  const keys = ['impressions', 'reach', 'likes', 'replies', 'reposts', 'quotes', 'bookmarks', 'saves', 'shares', 'clicks', 'video_views'];
  return Object.fromEntries(keys.map((k) => [k, values[k] ?? null]));
}
