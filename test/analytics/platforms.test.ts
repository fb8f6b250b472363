import { strict as assert } from 'node:assert';
import { PlatformFailure } from '../../src/platforms/types';
import { metrics, startAnalyticsWorld, type AnalyticsWorld } from './world';

/**
 * Each platform's numbers, read from its stand-in's metrics endpoint as the platform documents it: values equal to
 * what the stand-in holds, null for every key the platform does not report (never a made-up 0).
 */
describe('analytics: per platform', function () {
  this.timeout(120_000);
  let world: AnalyticsWorld;

  before(async () => {
    world = await startAnalyticsWorld();
  });

  after(async () => {
    await world?.stop();
  });

  async function read(postId: string) {
    const res = await world.analytics(postId);
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  }

  it('x: public metrics, link clicks from the non-public ones; reach, saves, shares null; video views null without a video', async () => {
    const post = await world.publish('x');
    world.standIns.x.setMetrics(post.platformPostId, { impressions: 1200, likes: 40, replies: 3, reposts: 7, quotes: 2, bookmarks: 5, clicks: 31 });
    const data = await read(post.postId);
    assert.deepEqual(data, {
      post_id: post.postId,
      platform: 'x',
      platform_post_id: post.platformPostId,
      metrics: metrics({ impressions: 1200, likes: 40, replies: 3, reposts: 7, quotes: 2, bookmarks: 5, clicks: 31 }),
      synced_at: world.clock.now().toISOString(),
      next_refresh_after: new Date(world.clock.now().getTime() + 5 * 60_000).toISOString(),
    });
    const call = world.standIns.x.standIn.calls('GET', `/2/tweets/${post.platformPostId}`)[0];
    assert.equal(call.query['tweet.fields'], 'public_metrics,non_public_metrics');
  });

  it('x: a post without a link has no url_link_clicks, so clicks is null', async () => {
    const post = await world.publish('x');
    world.standIns.x.setMetrics(post.platformPostId, { impressions: 10, likes: 1 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ impressions: 10, likes: 1, replies: 0, reposts: 0, quotes: 0, bookmarks: 0 }));
  });

  it('x: past 30 days X withholds non-public metrics (a partial error beside the data): clicks null, public counts kept', async () => {
    const post = await world.publish('x');
    world.standIns.x.tweets().find((t) => t.id === post.platformPostId)!.created_at = new Date(Date.now() - 31 * 86_400_000).toISOString();
    world.standIns.x.setMetrics(post.platformPostId, { impressions: 70, likes: 4, clicks: 9 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ impressions: 70, likes: 4, replies: 0, reposts: 0, quotes: 0, bookmarks: 0 }));
  });

  it("x: a video post's views are the video's own view count", async () => {
    const post = await world.publish('x', { video: true, media: [{ url: 'https://cdn.example/clip.mp4' }] });
    world.standIns.x.setMetrics(post.platformPostId, { impressions: 90, likes: 2, video_views: 61 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ impressions: 90, likes: 2, replies: 0, reposts: 0, quotes: 0, bookmarks: 0, video_views: 61 }));
    const call = world.standIns.x.standIn.calls('GET', `/2/tweets/${post.platformPostId}`)[0];
    assert.equal(call.query.expansions, 'attachments.media_keys');
  });

  it('x and bluesky: a post deleted on the platform is 502 saying the platform no longer has it', async () => {
    const tweet = await world.publish('x');
    world.standIns.x.tweets().find((t) => t.id === tweet.platformPostId)!.deleted = true;
    const x = await world.analytics(tweet.postId);
    assert.equal(x.status, 502);
    assert.deepEqual(x.body, { error: { code: 'upstream_error', message: 'X no longer has this post.' } });
    const skeet = await world.publish('bluesky');
    world.standIns.bluesky.remove(skeet.platformPostId);
    const bluesky = await world.analytics(skeet.postId);
    assert.equal(bluesky.status, 502);
    assert.deepEqual(bluesky.body, { error: { code: 'upstream_error', message: 'Bluesky no longer has this post.' } });
  });

  it('bluesky: likes, replies, reposts, quotes; bookmarks only where the AppView reports them; no impressions', async () => {
    const post = await world.publish('bluesky');
    world.standIns.bluesky.setMetrics(post.platformPostId, { likes: 12, replies: 4, reposts: 3, quotes: 1 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ likes: 12, replies: 4, reposts: 3, quotes: 1 }));
    const other = await world.publish('bluesky');
    world.standIns.bluesky.setMetrics(other.platformPostId, { likes: 2, bookmarks: 9 });
    assert.deepEqual((await read(other.postId)).metrics, metrics({ likes: 2, replies: 0, reposts: 0, quotes: 0, bookmarks: 9 }));
  });

  it('mastodon: favourites, replies, reblogs, quotes (4.5+); an older server without quotes_count gives null quotes', async () => {
    const post = await world.publish('mastodon');
    world.standIns.mastodon.setMetrics(post.platformPostId, { likes: 8, replies: 2, reposts: 6, quotes: 1 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ likes: 8, replies: 2, reposts: 6, quotes: 1 }));
    world.standIns.mastodon.config.quotesCount = false;
    try {
      const old = await world.publish('mastodon');
      world.standIns.mastodon.setMetrics(old.platformPostId, { likes: 3 });
      assert.deepEqual((await read(old.postId)).metrics, metrics({ likes: 3, replies: 0, reposts: 0 }));
    } finally {
      world.standIns.mastodon.config.quotesCount = true;
    }
  });

  it('facebook: reactions, comments, shares from the post; views, reach and clicks from insights; shares 0 when nobody shared', async () => {
    const post = await world.publish('facebook');
    world.standIns.facebook.setMetrics(post.platformPostId, { likes: 21, replies: 4, shares: 6, impressions: 900, reach: 700, clicks: 15 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ likes: 21, replies: 4, shares: 6, impressions: 900, reach: 700, clicks: 15 }));
    const quiet = await world.publish('facebook');
    world.standIns.facebook.setMetrics(quiet.platformPostId, { likes: 1 });
    assert.deepEqual((await read(quiet.postId)).metrics, metrics({ likes: 1, replies: 0, shares: 0, impressions: 0, reach: 0, clicks: 0 }));
    const insights = world.standIns.facebook.standIn.calls('GET', `/v25.0/${quiet.platformPostId}/insights`)[0];
    assert.equal(insights.query.metric, 'post_media_view,post_total_media_view_unique,post_clicks');
  });

  it('facebook: a video post also reads post_video_views', async () => {
    const post = await world.publish('facebook', { media: [{ url: 'https://cdn.example/clip.mp4' }] });
    world.standIns.facebook.setMetrics(post.platformPostId, { likes: 2, video_views: 340 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ likes: 2, replies: 0, shares: 0, impressions: 0, reach: 0, clicks: 0, video_views: 340 }));
  });

  it('facebook Page story: Graph documents no numbers for a story, so every key is null and Graph is not asked', async () => {
    const post = await world.publish('facebook', { configuration: { placement: 'story' } });
    world.standIns.facebook.setMetrics(post.platformPostId, { likes: 5, impressions: 80 });
    const calls = () => world.standIns.facebook.standIn.calls('GET', new RegExp(`/${post.platformPostId}(/insights)?$`)).length;
    assert.deepEqual((await read(post.postId)).metrics, metrics({}));
    assert.equal(calls(), 0);
  });

  it('instagram: views, reach, likes, comments, saved, shares from media insights; quotes, bookmarks, clicks null', async () => {
    const post = await world.publish('instagram');
    world.standIns.instagram.setMetrics(post.platformPostId, { impressions: 500, reach: 410, likes: 33, replies: 5, saves: 9, shares: 4 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ impressions: 500, reach: 410, likes: 33, replies: 5, saves: 9, shares: 4 }));
    const call = world.standIns.instagram.standIn.calls('GET', `/v25.0/${post.platformPostId}/insights`)[0];
    assert.equal(call.query.metric, 'views,reach,likes,comments,saved,shares');
  });

  it('instagram story: views, reach, replies, shares (the story metric set); likes, saves and the rest null', async () => {
    const post = await world.publish('instagram', { configuration: { placement: 'story' } });
    world.standIns.instagram.setMetrics(post.platformPostId, { impressions: 120, reach: 95, replies: 4, shares: 2, likes: 9, saves: 1 });
    const res = await world.analytics(post.postId);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.metrics, metrics({ impressions: 120, reach: 95, replies: 4, shares: 2 }));
    const call = world.standIns.instagram.standIn.calls('GET', `/v25.0/${post.platformPostId}/insights`)[0];
    assert.equal(call.query.metric, 'views,reach,replies,shares');
  });

  it('instagram stand-in: a metric the media product type lacks refuses the whole insights call with #100, as Graph does', async () => {
    const post = await world.publish('instagram', { configuration: { placement: 'story' } });
    const ctx = { credentials: { access_token: world.standIns.instagram.user.igToken }, settings: { igUserId: world.standIns.instagram.user.igUserId, via: 'instagram' } };
    await assert.rejects(
      world.standIns.adapters.instagram.readMetrics!(ctx, { platformPostId: post.platformPostId, hasVideo: false }),
      (err: Error & { kind?: string; detail?: { body?: string } }) => /does not support the likes, comments, saved metric for this media product type/.test(err.detail?.body ?? ''),
    );
  });

  it('instagram: media with too few viewers for insights (#10) gives the counts on the media, the rest null', async () => {
    const post = await world.publish('instagram');
    world.standIns.instagram.setMetrics(post.platformPostId, { likes: 3, replies: 1, impressions: 40 });
    world.standIns.instagram.fewViewers.add(post.platformPostId);
    assert.deepEqual((await read(post.postId)).metrics, metrics({ likes: 3, replies: 1 }));
  });

  it('threads: views, likes, replies, reposts, quotes, shares; reach, bookmarks, saves, clicks null', async () => {
    const post = await world.publish('threads');
    world.standIns.threads.setMetrics(post.platformPostId, { impressions: 77, likes: 6, replies: 2, reposts: 1, quotes: 3, shares: 2 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ impressions: 77, likes: 6, replies: 2, reposts: 1, quotes: 3, shares: 2 }));
  });

  it('linkedin page: organic share statistics; reshares are reposts; quotes, bookmarks, saves, video views null', async () => {
    const post = await world.publish('linkedin');
    world.standIns.linkedin.setMetrics(post.platformPostId, { impressions: 3000, reach: 2100, likes: 45, replies: 6, reposts: 4, clicks: 120 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ impressions: 3000, reach: 2100, likes: 45, replies: 6, reposts: 4, clicks: 120 }));
    assert.equal(world.reads('linkedin'), 1);
  });

  it('linkedin member: one memberCreatorPostAnalytics call per metric type, totals', async () => {
    const before = world.reads('linkedin_member');
    const post = await world.publish('linkedin_member');
    world.standIns.linkedin.setMetrics(post.platformPostId, { impressions: 800, reach: 650, likes: 20, replies: 3, reposts: 2 });
    assert.deepEqual((await read(post.postId)).metrics, metrics({ impressions: 800, reach: 650, likes: 20, replies: 3, reposts: 2 }));
    const calls = world.standIns.linkedin.standIn.calls('GET', '/rest/memberCreatorPostAnalytics').slice(before);
    assert.deepEqual(calls.map((c) => c.query.queryType).sort(), ['COMMENT', 'IMPRESSION', 'MEMBERS_REACHED', 'REACTION', 'RESHARE']);
    assert.ok(calls.every((c) => c.query.entity === `(share:${post.platformPostId})` && c.query.aggregation === 'TOTAL'));
  });

  it("every platform's read hands the caller's signal to its calls: aborted, the call in flight ends and the platform sees it closed unanswered", async () => {
    // Each platform's metrics call (Facebook's first is the post's counts; LinkedIn members read five at once).
    const cases = [
      { platform: 'x', path: /^\/2\/tweets\/\d+$/, calls: 1 },
      { platform: 'bluesky', path: /^\/xrpc\/app\.bsky\.feed\.getPosts$/, calls: 1 },
      { platform: 'mastodon', path: /^\/api\/v1\/statuses\/\d+$/, calls: 1 },
      { platform: 'facebook', path: /^\/v25\.0\/[^/]+$/, calls: 1 },
      { platform: 'instagram', path: /\/insights$/, calls: 1 },
      { platform: 'threads', path: /\/insights$/, calls: 1 },
      { platform: 'linkedin', path: /^\/rest\/organizationalEntityShareStatistics$/, calls: 1 },
      { platform: 'linkedin_member', path: /^\/rest\/memberCreatorPostAnalytics$/, calls: 5 },
    ] as const;
    for (const { platform, path, calls } of cases) {
      const post = await world.publish(platform);
      const slug = platform === 'linkedin_member' ? 'linkedin' : platform;
      const standIn = world.standIns[slug].standIn;
      const before = standIn.calls('GET', path).length;
      standIn.inject({ method: 'GET', path }, { kind: 'hang' }, calls);
      const caller = new AbortController();
      const reading = world.standIns.adapters[slug].readMetrics!(await world.contextOf(platform), { platformPostId: post.platformPostId, hasVideo: false, signal: caller.signal });
      const outcome = reading.then(() => 'answered', (err: unknown) => err);
      for (let i = 0; i < 200 && standIn.calls('GET', path).length < before + calls; i += 1) await new Promise((r) => setTimeout(r, 10));
      const inFlight = standIn.calls('GET', path).slice(before);
      assert.equal(inFlight.length, calls, `${platform}: the call reached the platform`);
      const abortedAt = Date.now();
      caller.abort();
      const err = await outcome;
      assert.ok(Date.now() - abortedAt < 1_000, `${platform}: the read ends at the abort, not at the client's timeout`);
      assert.ok(err instanceof PlatformFailure && err.detail?.body === 'request cancelled by its caller', `${platform}: ${String(err)}`);
      for (let i = 0; i < 50 && inFlight.some((call) => call.abandonedAt === undefined); i += 1) await new Promise((r) => setTimeout(r, 10));
      assert.ok(inFlight.every((call) => call.abandonedAt !== undefined), `${platform}: the platform sees every call in flight closed unanswered`);
      standIn.clearFaults();
    }
  });
});
