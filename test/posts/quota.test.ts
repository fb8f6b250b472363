import assert from 'node:assert/strict';
import { usageFor, usageMonth } from '../../src/quota/quota';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

describe('Monthly post quota', function () {
  this.timeout(60_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness();
  });
  after(async () => h?.stop());

  async function userWithUsage(plan: 'free' | 'agent', posts: number) {
    const user = await h.api.newUser(plan);
    const account = await insertXAccount(h.db, user.userId, h.standIns.x);
    await h.db.insertInto('usage_months').values({ user_id: user.userId, month: usageMonth(h.now()), posts }).execute();
    return { ...user, account };
  }

  it('Free: the 31st post is 429 usage_limit_exceeded with the arithmetic, nothing published, no row', async () => {
    const user = await userWithUsage('free', 30);
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'one too many' } });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), null);
    assert.match(res.body.error.message, /^Monthly post quota reached: 30 of 30 posts used this month on the Free plan; this request needs 1 \(first comments count as posts\) and 0 are left \(resets \d{4}-\d{2}-01, UTC\)$/);
    assert.equal(res.body.error.code, 'usage_limit_exceeded');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'one too many').length, 0);
    assert.equal((await h.db.selectFrom('posts').select('id').where('user_id', '=', user.userId).execute()).length, 0);
  });

  it('Free: a first comment counts as a post (29 used, post + comment refused)', async () => {
    const user = await userWithUsage('free', 29);
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'post', first_comment: 'and comment' } });
    assert.equal(res.status, 429);
    assert.match(res.body.error.message, /this request needs 2 \(first comments count as posts\) and 1 is left/);
  });

  it('paid plans keep publishing past the quota and record the overage', async () => {
    const user = await userWithUsage('agent', 300);
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'overage post' } });
    assert.equal(res.status, 201, res.text);
    const usage = await usageFor(h.db, user.userId, h.now());
    assert.deepEqual({ posts: usage.posts, overage: usage.overage }, { posts: 301, overage: 1 });
  });

  it('paid plans: an x link post is billed and recorded; own credentials are exempt', async () => {
    const user = await userWithUsage('agent', 0);
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'see https://example.com/paid' } });
    assert.equal(res.status, 201, res.text);
    assert.equal((await usageFor(h.db, user.userId, h.now())).x_link_posts, 1);
    const own = await insertXAccount(h.db, user.userId, h.standIns.x, { ownCredentials: true });
    const exempt = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: own.id, text: 'see https://example.com/own' } });
    assert.equal(exempt.status, 201, exempt.text);
    assert.equal((await usageFor(h.db, user.userId, h.now())).x_link_posts, 1);
  });

  it('many parallel creates at the edge of the Free quota never exceed it', async () => {
    const user = await userWithUsage('free', 20);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: `race ${i}` } })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(10).fill(429)]);
    const usage = await usageFor(h.db, user.userId, h.now());
    assert.equal(usage.posts, 30);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text.startsWith('race ')).length, 10);
    const reservations = await h.db.selectFrom('quota_reservations').select('post_id').where('user_id', '=', user.userId).execute();
    assert.equal(reservations.length, 10);
  });

  it('Free: a fan-out that does not fit is refused whole (429), nothing published', async () => {
    const user = await userWithUsage('free', 29);
    const second = await insertXAccount(h.db, user.userId, h.standIns.x);
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_ids: [user.account.id, second.id], text: 'two of us' } });
    assert.equal(res.status, 429);
    assert.match(res.body.error.message, /this request needs 2 \(first comments count as posts\) and 1 is left/);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'two of us').length, 0);
  });

  it('adding a first comment to a scheduled post reserves it; removing it returns it', async () => {
    await h.syncClock();
    const user = await userWithUsage('free', 0);
    const at = new Date(h.now().getTime() + 3 * 3_600_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'edit me', schedule_at: at } });
    assert.equal(res.status, 201, res.text);
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 1);
    const added = await h.api.request('PATCH', `/api/v1/posts/${res.body.data.id}`, { key: user.apiKey, body: { first_comment: 'now with a comment' } });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual(added.body.data.first_comment, { text: 'now with a comment', status: 'pending', comment_id: null, error: null });
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 2);
    const removed = await h.api.request('PATCH', `/api/v1/posts/${res.body.data.id}`, { key: user.apiKey, body: { first_comment: '' } });
    assert.equal(removed.body.data.first_comment, null);
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 1);
    await h.api.request('DELETE', `/api/v1/posts/${res.body.data.id}`, { key: user.apiKey });
    assert.deepEqual(await usageFor(h.db, user.userId, h.now()), { month: (await usageFor(h.db, user.userId, h.now())).month, posts: 0, scheduled: 0, overage: 0, x_link_posts: 0 });
  });
});
