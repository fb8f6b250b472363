import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { createHttpClient } from '../../src/net/http';
import { createFacebookAdapter } from '../../src/platforms/facebook';
import { request, startApi } from '../helpers/api';
import { testSealedBox } from '../posts/fixtures';
import { startAnalyticsWorld, type AnalyticsWorld } from './world';

/** The stored snapshot answers; the platform is read at most once per post in 5 minutes, by one request at a time. */
describe('analytics: snapshot, refresh floor and concurrency', function () {
  this.timeout(120_000);
  let world: AnalyticsWorld;

  before(async () => {
    world = await startAnalyticsWorld();
  });

  after(async () => {
    await world?.stop();
  });

  it('the first request reads the platform; later plain requests answer the stored snapshot without reading again', async () => {
    const post = await world.publish('mastodon');
    world.standIns.mastodon.setMetrics(post.platformPostId, { likes: 5 });
    const reads = world.reads('mastodon');
    const first = await world.analytics(post.postId);
    assert.equal(first.status, 200);
    assert.equal(world.reads('mastodon'), reads + 1);
    world.standIns.mastodon.setMetrics(post.platformPostId, { likes: 50 });
    world.clock.advance(10 * 60_000); // past the floor: a plain GET still answers the snapshot
    const second = await world.analytics(post.postId);
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, first.body);
    assert.equal(second.body.data.metrics.likes, 5);
    assert.equal(world.reads('mastodon'), reads + 1);
  });

  it('refresh=true inside 5 minutes is 429 with Retry-After up to next_refresh_after and does not reach the platform', async () => {
    const post = await world.publish('x');
    world.standIns.x.setMetrics(post.platformPostId, { likes: 1 });
    const first = await world.analytics(post.postId);
    assert.equal(first.status, 200);
    const reads = world.reads('x');
    world.clock.advance(2 * 60_000 + 10_000);
    const refused = await world.analytics(post.postId, { refresh: true });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'analytics_refresh_rate_limited');
    assert.equal(refused.headers.get('retry-after'), '170');
    assert.equal(world.reads('x'), reads);
    // A plain GET inside the floor answers the snapshot.
    const plain = await world.analytics(post.postId);
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body, first.body);
    assert.equal(world.reads('x'), reads);
  });

  it('refresh=true once the floor has passed reads the platform again and stores the new numbers and floor', async () => {
    const post = await world.publish('threads');
    world.standIns.threads.setMetrics(post.platformPostId, { likes: 2, impressions: 20 });
    assert.equal((await world.analytics(post.postId)).body.data.metrics.likes, 2);
    world.standIns.threads.setMetrics(post.platformPostId, { likes: 9 });
    world.clock.advance(5 * 60_000);
    const reads = world.reads('threads');
    const refreshed = await world.analytics(post.postId, { refresh: true });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal(world.reads('threads'), reads + 1);
    assert.equal(refreshed.body.data.metrics.likes, 9);
    assert.equal(refreshed.body.data.metrics.impressions, 20);
    assert.equal(refreshed.body.data.synced_at, world.clock.now().toISOString());
    assert.equal(refreshed.body.data.next_refresh_after, new Date(world.clock.now().getTime() + 5 * 60_000).toISOString());
    assert.equal((await world.analytics(post.postId)).body.data.metrics.likes, 9);
    world.clock.advance(4 * 60_000 + 59_000);
    const again = await world.analytics(post.postId, { refresh: true });
    assert.equal(again.status, 429);
    assert.equal(again.headers.get('retry-after'), '1');
  });

  it('10 parallel refreshes read the platform once: one answer with the numbers, the others 429', async () => {
    const post = await world.publish('facebook');
    world.standIns.facebook.setMetrics(post.platformPostId, { likes: 4 });
    assert.equal((await world.analytics(post.postId)).status, 200);
    world.clock.advance(5 * 60_000);
    world.standIns.facebook.setMetrics(post.platformPostId, { likes: 40 });
    const reads = world.reads('facebook');
    // The platform answers slowly, so every request arrives while the read is in flight.
    world.standIns.facebook.standIn.inject({ path: `/v25.0/${post.platformPostId}` }, { kind: 'delay', ms: 300 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => world.analytics(post.postId, { refresh: true })));
    assert.equal(world.reads('facebook'), reads + 1);
    const ok = answers.filter((a) => a.status === 200);
    assert.equal(ok.length, 1, answers.map((a) => a.status).join(','));
    assert.equal(ok[0].body.data.metrics.likes, 40);
    assert.ok(answers.filter((a) => a.status !== 200).every((a) => a.status === 429 && a.body.error.code === 'analytics_refresh_rate_limited' && Number(a.headers.get('retry-after')) > 0));
  });

  it('the claim holds across API instances: 10 refreshes split over two apps on one database read the platform once', async () => {
    const second = await startApi({ plan: 'scale', deps: { adapters: world.standIns.adapters, sealedBox: testSealedBox, posts: { now: world.clock.now } } });
    try {
      const post = await world.publish('threads');
      world.standIns.threads.setMetrics(post.platformPostId, { likes: 1 });
      assert.equal((await world.analytics(post.postId)).status, 200);
      world.clock.advance(5 * 60_000);
      const reads = world.reads('threads');
      world.standIns.threads.standIn.inject({ path: `/v1.0/${post.platformPostId}/insights` }, { kind: 'delay', ms: 300 });
      const path = `/api/v1/analytics/posts/${post.postId}?refresh=true`;
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => request(i % 2 ? second.url : world.api.url, 'GET', path, { key: world.api.apiKey })),
      );
      assert.equal(world.reads('threads'), reads + 1);
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, ...Array(9).fill(429)]);
    } finally {
      await second.close();
    }
  });

  it('10 parallel first requests read the platform once and all answer the same numbers', async () => {
    const post = await world.publish('bluesky');
    world.standIns.bluesky.setMetrics(post.platformPostId, { likes: 13 });
    const reads = world.reads('bluesky');
    world.standIns.bluesky.standIn.inject({ path: '/xrpc/app.bsky.feed.getPosts' }, { kind: 'delay', ms: 300 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => world.analytics(post.postId)));
    assert.equal(world.reads('bluesky'), reads + 1);
    assert.deepEqual(answers.map((a) => a.status), Array(10).fill(200));
    assert.ok(answers.every((a) => a.body.data.metrics.likes === 13 && a.body.data.synced_at === answers[0].body.data.synced_at));
  });

  it('10 parallel first requests meeting a platform refusal read the platform once, and all answer 502', async () => {
    const post = await world.publish('threads');
    const reads = world.reads('threads');
    world.standIns.threads.insightsAccess.granted = false;
    try {
      // A request arriving after the read failed gets 429 from the floor it set (errors.test.ts): the platform answers
      // slowly enough that all ten arrive while the read is in flight, even on a loaded machine.
      world.standIns.threads.standIn.inject({ path: `/v1.0/${post.platformPostId}/insights` }, { kind: 'delay', ms: 2_000 });
      const answers = await Promise.all(Array.from({ length: 10 }, () => world.analytics(post.postId)));
      assert.equal(world.reads('threads'), reads + 1);
      assert.ok(answers.every((a) => a.status === 502 && a.body.error.code === 'upstream_error' && a.body.error.message.startsWith('Threads ')), answers.map((a) => a.text).join('\n'));
    } finally {
      world.standIns.threads.insightsAccess.granted = true;
    }
  });

  it("a plain GET waiting on another process's first read gives up after 25 s: 502 saying the platform has not answered yet, Retry-After 10, no read of its own", async () => {
    const post = await world.publish('x');
    world.standIns.x.setMetrics(post.platformPostId, { likes: 6 });
    const reads = world.reads('x');
    // Another API process claimed the first read a moment ago and is still waiting for the platform.
    await world.api.deps.db.insertInto('post_analytics').values({ post_id: post.postId, refresh_claim_id: randomUUID(), refresh_claimed_at: world.clock.now() }).execute();
    const started = Date.now();
    const waited = await world.analytics(post.postId);
    const elapsed = Date.now() - started;
    assert.equal(waited.status, 502, waited.text);
    assert.deepEqual(waited.body, { error: { code: 'upstream_error', message: "X has not answered Herald's read of this post's analytics yet; try again in 10 seconds." } });
    assert.equal(waited.headers.get('retry-after'), '10');
    assert.ok(elapsed >= 25_000 && elapsed < 40_000, String(elapsed));
    assert.equal(world.reads('x'), reads);
    // That process died: its claim is taken over once abandoned (2 minutes), and the platform is read.
    world.clock.advance(2 * 60_000 + 1_000);
    const read = await world.analytics(post.postId);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.data.metrics.likes, 6);
    assert.equal(world.reads('x'), reads + 1);
  });

  it('a first read whose calls together outlast the wait ends within its budget, and a GET waiting for it answers what it ended with, never "not answered yet"', async () => {
    // The production HTTP timeout (30 s a call; the stand-ins' shared client has 5 s), through an API of its own.
    const http = createHttpClient({ allowInsecure: true });
    const facebook = createFacebookAdapter({ http, origin: world.standIns.facebook.origin });
    const api = await startApi({ plan: 'scale', deps: { adapters: { ...world.standIns.adapters, facebook }, sealedBox: testSealedBox, posts: { now: world.clock.now } } });
    try {
      const post = await world.publish('facebook');
      world.standIns.facebook.setMetrics(post.platformPostId, { likes: 3 });
      const reads = world.reads('facebook');
      // Facebook reads in two calls, the post's counts and then its insights: each answers after 13 s, 26 s together,
      // past the 25 s a waiting GET waits, though each call is well inside the HTTP client's 30 s.
      world.standIns.facebook.standIn.inject({ path: new RegExp(`^/v25\\.0/${post.platformPostId}(/insights)?$`) }, { kind: 'delay', ms: 13_000 }, 2);
      const path = `/api/v1/analytics/posts/${post.postId}`;
      const started = Date.now();
      const timed = (answer: ReturnType<typeof request>) => answer.then((res) => ({ res, at: Date.now() - started }));
      const first = timed(request(api.url, 'GET', path, { key: world.api.apiKey }));
      for (;;) {
        const row = await world.api.deps.db.selectFrom('post_analytics').select('refresh_claim_id').where('post_id', '=', post.postId).executeTakeFirst();
        if (row?.refresh_claim_id) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const waiting = timed(request(api.url, 'GET', path, { key: world.api.apiKey }));
      const [reader, waiter] = [await first, await waiting];
      assert.equal(reader.res.status, 502, reader.res.text);
      assert.deepEqual(reader.res.body, { error: { code: 'upstream_error', message: 'Facebook did not answer in time; try again later.' } });
      assert.ok(reader.at >= 19_000 && reader.at < 25_000, `the read ends at its 20 s budget, inside the wait: ${reader.at}`);
      assert.equal(waiter.res.status, 502, waiter.res.text);
      assert.deepEqual(waiter.res.body, {
        error: { code: 'upstream_error', message: "Facebook did not give this post's analytics to the request reading them at the same time; try again later." },
      });
      assert.ok(waiter.at >= reader.at - 1_000, `the waiter waited for the read's end: ${waiter.at} vs ${reader.at}`);
      assert.equal(world.reads('facebook'), reads + 1);
      // The insights call in flight at the budget (answering at 26 s) is aborted then: Facebook sees it closed unanswered.
      const [insights] = world.standIns.facebook.standIn.calls('GET', new RegExp(`/${post.platformPostId}/insights$`));
      for (let i = 0; i < 100 && insights.abandonedAt === undefined; i += 1) await new Promise((r) => setTimeout(r, 20));
      assert.ok(insights.abandonedAt !== undefined, 'the call given up on is aborted, not left to run to its answer');
      const abortedAt = insights.abandonedAt - started;
      assert.ok(abortedAt >= 19_000 && abortedAt < reader.at + 1_000, `aborted at the budget: ${abortedAt} vs ${reader.at}`);
      // The read reached the platform: it counts against the floor, and nothing reads again inside it.
      const after = await request(api.url, 'GET', path, { key: world.api.apiKey });
      assert.equal(after.status, 429, after.text);
      assert.equal(world.reads('facebook'), reads + 1);
    } finally {
      await api.close();
      await http.close();
    }
  });

  it('a read given up on at its budget that answers after all keeps its numbers: the next plain GET answers them, no second read', async () => {
    // A metrics read that ignores the abort (a step that does not pass the signal on) and answers at 21 s.
    const mastodon = world.standIns.adapters.mastodon;
    let answeredAt = 0;
    const slow = {
      ...mastodon,
      readMetrics: async (ctx: Parameters<NonNullable<typeof mastodon.readMetrics>>[0], req: Parameters<NonNullable<typeof mastodon.readMetrics>>[1]) => {
        await new Promise((r) => setTimeout(r, 21_000));
        const answer = await mastodon.readMetrics!(ctx, { ...req, signal: undefined });
        answeredAt = Date.now();
        return answer;
      },
    };
    const api = await startApi({ plan: 'scale', deps: { adapters: { ...world.standIns.adapters, mastodon: slow }, sealedBox: testSealedBox, posts: { now: world.clock.now } } });
    try {
      const post = await world.publish('mastodon');
      world.standIns.mastodon.setMetrics(post.platformPostId, { likes: 12 });
      const path = `/api/v1/analytics/posts/${post.postId}`;
      const first = await request(api.url, 'GET', path, { key: world.api.apiKey });
      assert.equal(first.status, 502, first.text);
      assert.equal(first.body.error.message, 'Mastodon did not answer in time; try again later.');
      for (let i = 0; i < 200 && answeredAt === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
      assert.ok(answeredAt > 0, 'the read answered after its budget');
      let row = await world.api.deps.db.selectFrom('post_analytics').selectAll().where('post_id', '=', post.postId).executeTakeFirstOrThrow();
      for (let i = 0; i < 100 && row.metrics === null; i += 1) {
        await new Promise((r) => setTimeout(r, 20));
        row = await world.api.deps.db.selectFrom('post_analytics').selectAll().where('post_id', '=', post.postId).executeTakeFirstOrThrow();
      }
      assert.equal(row.metrics?.likes, 12, 'the late answer is stored');
      assert.equal(row.refresh_claim_id, null);
      const reads = world.reads('mastodon');
      const after = await request(api.url, 'GET', path, { key: world.api.apiKey });
      assert.equal(after.status, 200, after.text);
      assert.equal(after.body.data.metrics.likes, 12);
      assert.equal(world.reads('mastodon'), reads, 'answered from the kept numbers');
      // The failed read's floor still holds: a refresh inside it is 429, the platform not read.
      const refresh = await request(api.url, 'GET', `${path}?refresh=true`, { key: world.api.apiKey });
      assert.equal(refresh.status, 429, refresh.text);
      assert.equal(world.reads('mastodon'), reads);
    } finally {
      await api.close();
    }
  });

  it('the snapshot is one row a post with the numbers, sync time and floor', async () => {
    const post = await world.publish('instagram');
    world.standIns.instagram.setMetrics(post.platformPostId, { likes: 3 });
    await world.analytics(post.postId);
    const rows = await world.api.deps.db.selectFrom('post_analytics').selectAll().where('post_id', '=', post.postId).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].metrics?.likes, 3);
    assert.equal(rows[0].refresh_claim_id, null);
    assert.equal(rows[0].synced_at?.toISOString(), world.clock.now().toISOString());
  });
});
