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

  it('paid plans: a refund of a post booked within the quota takes the overage back; the month is billed only what is past it', async () => {
    // Agent (300 a month): a scheduled post is the 300th (within the quota), an immediate one the 301st (overage);
    // deleting the scheduled post returns its charge: 300 posts, none past the quota, so no overage.
    await h.syncClock();
    const user = await userWithUsage('agent', 299);
    const usage = async () => {
      const u = await usageFor(h.db, user.userId, h.now());
      return { posts: u.posts, overage: u.overage };
    };
    const at = new Date(h.now().getTime() + 3 * 3_600_000).toISOString();
    const scheduled = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'the 300th', schedule_at: at } });
    assert.equal(scheduled.status, 201, scheduled.text);
    assert.deepEqual(await usage(), { posts: 300, overage: 0 });
    const immediate = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'the 301st' } });
    assert.equal(immediate.status, 201, immediate.text);
    assert.deepEqual(await usage(), { posts: 301, overage: 1 });
    const deleted = await h.api.request('DELETE', `/api/v1/posts/${scheduled.body.data.id}`, { key: user.apiKey });
    assert.ok(deleted.status < 300, deleted.text);
    assert.deepEqual(await usage(), { posts: 300, overage: 0 }, 'no post past the quota is left to bill');
    // Past it again: the next post is overage once more.
    const again = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'the 301st again' } });
    assert.equal(again.status, 201, again.text);
    assert.deepEqual(await usage(), { posts: 301, overage: 1 });
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

  it('editing a scheduled post booked last month charges this month nothing, even when this month is full', async () => {
    await h.syncClock();
    const user = await userWithUsage('free', 0);
    const at = new Date(h.now().getTime() + 3 * 3_600_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: user.account.id, text: 'booked last month', first_comment: 'its comment', schedule_at: at } });
    assert.equal(res.status, 201, res.text);
    // As if created last month: its reservations and their counts there, this month's quota used up since.
    const thisMonth = usageMonth(h.now());
    const lastMonth = '2000-01';
    await h.db.updateTable('quota_reservations').set({ month: lastMonth }).where('post_id', '=', res.body.data.id).execute();
    await h.db.updateTable('usage_months').set({ month: lastMonth }).where('user_id', '=', user.userId).where('month', '=', thisMonth).execute();
    await h.db.insertInto('usage_months').values({ user_id: user.userId, month: thisMonth, posts: 30 }).execute();

    const edited = await h.api.request('PATCH', `/api/v1/posts/${res.body.data.id}`, { key: user.apiKey, body: { text: 'edited this month', first_comment: 'its comment, edited' } });
    assert.equal(edited.status, 200, edited.text);
    assert.equal((await usageFor(h.db, user.userId, h.now())).posts, 30, 'nothing booked this month');
    assert.equal((await usageFor(h.db, user.userId, new Date('2000-01-15T00:00:00Z'))).posts, 2, 'the post and its comment stay booked last month');
    const reserved = await h.db.selectFrom('quota_reservations').select(['kind', 'month', 'state']).where('post_id', '=', res.body.data.id).orderBy('kind').execute();
    assert.deepEqual(reserved.map((r) => [r.kind, r.month, r.state]), [['first_comment', lastMonth, 'reserved'], ['post', lastMonth, 'reserved'], ['scheduled', lastMonth, 'reserved']]);

    // A first comment it did not have is a new charge: this month's, refused when this month is full.
    const withoutComment = await h.api.request('PATCH', `/api/v1/posts/${res.body.data.id}`, { key: user.apiKey, body: { first_comment: '' } });
    assert.equal(withoutComment.status, 200, withoutComment.text);
    assert.equal((await usageFor(h.db, user.userId, new Date('2000-01-15T00:00:00Z'))).posts, 1, 'the removed comment is refunded where it was booked');
    const again = await h.api.request('PATCH', `/api/v1/posts/${res.body.data.id}`, { key: user.apiKey, body: { first_comment: 'back again' } });
    assert.equal(again.status, 429, again.text);
    assert.equal(again.body.error.code, 'usage_limit_exceeded');
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
