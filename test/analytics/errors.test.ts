import { strict as assert } from 'node:assert';
import { graphError } from '../standins/graph';
import { startAnalyticsWorld, type AnalyticsWorld } from './world';

/** Every refusal of the analytics route, in the error envelope, with nothing stored and no quota spent. */
describe('analytics: errors', function () {
  this.timeout(120_000);
  let world: AnalyticsWorld;

  before(async () => {
    world = await startAnalyticsWorld();
  });

  after(async () => {
    await world?.stop();
  });

  async function storedSnapshot(postId: string) {
    return world.api.deps.db.selectFrom('post_analytics').selectAll().where('post_id', '=', postId).executeTakeFirst();
  }

  it("another user's post and an unknown id are 404 not_found", async () => {
    const other = await world.api.newUser('scale');
    const { accountId } = await world.connect('x', other.userId);
    const postId = await world.insertPost({ userId: other.userId, accountId, platform: 'x', status: 'published', platformPostId: '1' });
    const res = await world.analytics(postId);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: 'not_found', message: `Post ${postId} was not found` } });
    assert.equal((await world.analytics('00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await world.analytics('not-a-uuid')).status, 404);
  });

  for (const status of ['draft', 'scheduled', 'publishing', 'failed', 'deleted'] as const) {
    it(`a ${status} post is 400 bad_request: analytics exist once published`, async () => {
      const { accountId } = await world.connect('x');
      const postId = await world.insertPost({ accountId, platform: 'x', status, platformPostId: status === 'deleted' ? '5' : null });
      const res = await world.analytics(postId);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: { code: 'bad_request', message: `Post ${postId} is ${status}: analytics exist once the post is published.` } });
    });
  }

  it('a telegram post is 502 upstream_error: telegram has no post analytics, and nothing is sent to it', async () => {
    const { accountId } = await world.connect('telegram');
    const postId = await world.insertPost({ accountId, platform: 'telegram', status: 'published', platformPostId: '42' });
    const before = world.standIns.telegram.standIn.requests.length;
    const res = await world.analytics(postId, { refresh: true });
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'upstream_error');
    assert.match(res.body.error.message, /^Telegram has no post analytics/);
    assert.equal(world.standIns.telegram.standIn.requests.length, before);
    assert.equal(await storedSnapshot(postId), undefined);
  });

  it('a platform refusal is 502 naming the platform, without its body, and stores no numbers; the read counts against the 5-minute floor', async () => {
    const post = await world.publish('threads');
    world.standIns.threads.insightsAccess.granted = false;
    try {
      const res = await world.analytics(post.postId);
      assert.equal(res.status, 502);
      assert.equal(res.body.error.code, 'upstream_error');
      assert.match(res.body.error.message, /^Threads refused to give this post's analytics/);
      assert.doesNotMatch(res.text, /#10|permission for this action|fbtrace/);
      assert.equal(res.headers.get('retry-after'), null);
      const row = await storedSnapshot(post.postId);
      assert.equal(row?.metrics ?? null, null);
      assert.equal(row?.synced_at ?? null, null);
      assert.equal(row?.refresh_claim_id ?? null, null);
      assert.equal(row?.next_refresh_after?.toISOString(), new Date(world.clock.now().getTime() + 5 * 60_000).toISOString());
    } finally {
      world.standIns.threads.insightsAccess.granted = true;
    }
    world.standIns.threads.setMetrics(post.platformPostId, { likes: 1 });
    world.clock.advance(5 * 60_000);
    const retried = await world.analytics(post.postId);
    assert.equal(retried.status, 200);
    assert.equal(retried.body.data.metrics.likes, 1);
  });

  it('inside the floor a failed read set, a dashboard polling the post (plain GETs or refresh=true) gets 429 with Retry-After and the platform is not called', async () => {
    const post = await world.publish('mastodon');
    const reads = world.reads('mastodon');
    world.standIns.mastodon.standIn.inject({ path: `/api/v1/statuses/${post.platformPostId}` }, { kind: 'reply', response: { status: 503, json: { error: 'Service Unavailable' } } });
    const failed = await world.analytics(post.postId);
    assert.equal(failed.status, 502, failed.text);
    assert.equal(world.reads('mastodon'), reads + 1);
    world.standIns.mastodon.setMetrics(post.platformPostId, { likes: 8 });
    for (const [advanceMs, refresh, wait] of [[0, false, 300], [60_000, true, 240], [60_000, false, 180], [179_000, false, 1]] as const) {
      world.clock.advance(advanceMs);
      const polled = await world.analytics(post.postId, { refresh });
      assert.equal(polled.status, 429, polled.text);
      assert.equal(polled.body.error.code, 'analytics_refresh_rate_limited');
      assert.match(polled.body.error.message, /^The last read of post .* from the platform failed/);
      assert.equal(polled.headers.get('retry-after'), String(wait));
    }
    assert.equal(world.reads('mastodon'), reads + 1);
    world.clock.advance(1_000);
    const after = await world.analytics(post.postId);
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.data.metrics.likes, 8);
    assert.equal(world.reads('mastodon'), reads + 2);
  });

  it("a platform rate limit naming a wait longer than 5 minutes floors the next read at the platform's wait", async () => {
    const post = await world.publish('mastodon');
    world.standIns.mastodon.rateLimit(`/api/v1/statuses/${post.platformPostId}`, new Date(Date.now() + 600_000));
    const limited = await world.analytics(post.postId);
    assert.equal(limited.status, 502);
    const platformWait = Number(limited.headers.get('retry-after'));
    assert.ok(platformWait > 590 && platformWait <= 600, String(platformWait));
    const row = await storedSnapshot(post.postId);
    assert.equal(row?.next_refresh_after?.getTime(), world.clock.now().getTime() + platformWait * 1000);
    world.clock.advance(5 * 60_000);
    const polled = await world.analytics(post.postId);
    assert.equal(polled.status, 429);
    assert.equal(polled.headers.get('retry-after'), String(platformWait - 300));
  });

  it('a refused refresh keeps the previous numbers and sync time; the floor runs 5 minutes from the failed read', async () => {
    const post = await world.publish('facebook');
    world.standIns.facebook.setMetrics(post.platformPostId, { likes: 7 });
    const first = await world.analytics(post.postId);
    world.clock.advance(6 * 60_000);
    world.standIns.facebook.standIn.inject({ path: `/v25.0/${post.platformPostId}` }, { kind: 'reply', response: graphError({ status: 500, code: 2, message: 'An unexpected error has occurred.' }) });
    const failed = await world.analytics(post.postId, { refresh: true });
    assert.equal(failed.status, 502);
    assert.match(failed.body.error.message, /^Facebook /);
    const plain = await world.analytics(post.postId);
    assert.deepEqual(plain.body, { data: { ...first.body.data, next_refresh_after: new Date(world.clock.now().getTime() + 5 * 60_000).toISOString() } });
    const reads = world.reads('facebook');
    world.clock.advance(60_000);
    const again = await world.analytics(post.postId, { refresh: true });
    assert.equal(again.status, 429);
    assert.equal(again.headers.get('retry-after'), '240');
    assert.match(again.body.error.message, /^The last read of post .* failed/);
    assert.equal(world.reads('facebook'), reads);
  });

  it("a platform rate limit is 502 with Retry-After from the platform's own reset, and Herald does not retry", async () => {
    const post = await world.publish('x');
    const reads = world.reads('x');
    const reset = Math.floor(Date.now() / 1000) + 120;
    world.standIns.x.rateLimit(`/2/tweets/${post.platformPostId}`, reset);
    const res = await world.analytics(post.postId);
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'upstream_error');
    assert.equal(res.body.error.message, "X is rate limiting this account's reads; try again later.");
    const wait = Number(res.headers.get('retry-after'));
    assert.ok(wait >= 115 && wait <= 120, String(wait));
    assert.equal(world.reads('x'), reads + 1);
  });

  it('mastodon: a rate limit names its ISO reset as Retry-After; a post deleted on the server is 502 saying it is gone', async () => {
    const post = await world.publish('mastodon');
    world.standIns.mastodon.rateLimit(`/api/v1/statuses/${post.platformPostId}`, new Date(Date.now() + 60_000));
    const limited = await world.analytics(post.postId);
    assert.equal(limited.status, 502);
    const wait = Number(limited.headers.get('retry-after'));
    assert.ok(wait >= 55 && wait <= 60, String(wait));
    world.standIns.mastodon.liveStatuses().find((s) => s.id === post.platformPostId)!.deleted = true;
    world.clock.advance(5 * 60_000); // the rate-limited read set the floor
    const gone = await world.analytics(post.postId);
    assert.equal(gone.status, 502);
    assert.equal(gone.body.error.message, 'Mastodon no longer has this post.');
  });

  it('linkedin member analytics without r_member_postAnalytics is 502 naming LinkedIn', async () => {
    const post = await world.publish('linkedin_member');
    world.standIns.linkedin.memberAnalytics.granted = false;
    try {
      const res = await world.analytics(post.postId);
      assert.equal(res.status, 502);
      assert.match(res.body.error.message, /^LinkedIn refused to give this post's analytics/);
      assert.doesNotMatch(res.text, /ACCESS_DENIED/);
    } finally {
      world.standIns.linkedin.memberAnalytics.granted = true;
    }
  });

  it('an account needing re-authorization still gets analytics where the platform answers', async () => {
    const post = await world.publish('mastodon');
    await world.api.deps.db.updateTable('accounts').set({ active: false, inactive_reason: 'reauthorization_required' }).where('id', '=', post.accountId).execute();
    try {
      world.standIns.mastodon.setMetrics(post.platformPostId, { likes: 11 });
      const res = await world.analytics(post.postId);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.metrics.likes, 11);
    } finally {
      await world.api.deps.db.updateTable('accounts').set({ active: true, inactive_reason: null }).where('id', '=', post.accountId).execute();
    }
  });

  it('a post whose account was disconnected, with no snapshot yet, is 404 not_found ("account not found or not active"): its platform can no longer be read', async () => {
    const { accountId } = await world.connect('x');
    const postId = await world.insertPost({ accountId, platform: 'x', status: 'published', platformPostId: '99' });
    await world.api.deps.db.updateTable('accounts').set({ credentials_sealed: null, active: false, inactive_reason: 'disconnected' }).where('id', '=', accountId).execute();
    const res = await world.analytics(postId);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
    assert.match(res.body.error.message, /X account of post .* was disconnected/);
  });

  it('scope posts:read is needed (403 insufficient_scope otherwise); a posts:read key is enough', async () => {
    const post = await world.publish('bluesky');
    const writer = await world.api.newUser('scale', ['posts:write']);
    const refused = await world.analytics(post.postId, { key: writer.apiKey });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'insufficient_scope');
    const { apiKey } = await world.api.newUser('scale', ['posts:read']);
    const otherUsers = await world.analytics(post.postId, { key: apiKey });
    assert.equal(otherUsers.status, 404); // a posts:read key passes the scope check; the post is not that user's
  });

  it('analytics spend no quota', async () => {
    const post = await world.publish('instagram');
    const usage = () => world.api.deps.db.selectFrom('usage_months').selectAll().where('user_id', '=', world.api.userId).execute();
    const reservations = () => world.api.deps.db.selectFrom('quota_reservations').select('post_id').where('user_id', '=', world.api.userId).execute();
    const [usageBefore, reservationsBefore] = [await usage(), await reservations()];
    assert.equal((await world.analytics(post.postId)).status, 200);
    world.clock.advance(5 * 60_000);
    assert.equal((await world.analytics(post.postId, { refresh: true })).status, 200);
    assert.deepEqual(await usage(), usageBefore);
    assert.deepEqual(await reservations(), reservationsBefore);
  });

  it('unknown query parameters and a malformed refresh are 400', async () => {
    const post = await world.publish('x');
    assert.equal((await world.api.request('GET', `/api/v1/analytics/posts/${post.postId}?refresh=maybe`)).status, 400);
    assert.equal((await world.api.request('GET', `/api/v1/analytics/posts/${post.postId}?fields=all`)).status, 400);
  });
});
