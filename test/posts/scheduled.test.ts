import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { usageFor } from '../../src/quota/quota';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

const serviceUnavailable = {
  kind: 'reply' as const,
  response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } },
};

describe('Scheduled posts: durable timer, three retries, quota', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness();
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const inMinutes = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000);
  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('waits for scheduled_at, publishes at that instant and not before, exactly once', async () => {
    await h.syncClock();
    const at = inMinutes(60);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'on time', schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'scheduled');
    assert.equal(res.body.data.scheduled_at, at.toISOString());
    assert.equal(res.body.data.published_at, null);

    await h.env.sleep('59 minutes');
    assert.equal((await row(res.body.data.id)).status, 'scheduled');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'on time').length, 0);

    assert.deepEqual(await h.settle(res.body.data.id), { outcome: 'published', firstComment: null });
    const published = await row(res.body.data.id);
    assert.equal(published.status, 'published');
    assert.ok(published.published_at!.getTime() >= at.getTime(), 'not before the scheduled instant');
    assert.ok(published.published_at!.getTime() < at.getTime() + 60_000, 'at the scheduled instant');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'on time').length, 1);
    const usage = await usageFor(h.db, h.api.userId, h.now());
    const spent = await h.db.selectFrom('quota_reservations').select(['kind', 'state']).where('post_id', '=', published.id).orderBy('kind').execute();
    assert.deepEqual(spent, [
      { kind: 'post', state: 'spent' },
      { kind: 'scheduled', state: 'spent' },
    ]);
    assert.ok(usage.posts >= 1 && usage.scheduled >= 1);
  });

  it('retries a failing post three times (retry_count visible), then fails with the refusal and returns the quota', async () => {
    await h.syncClock();
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'flaky', schedule_at: inMinutes(10).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id = res.body.data.id;
    const during = await usageFor(h.db, h.api.userId, h.now());
    assert.deepEqual({ posts: during.posts - before.posts, scheduled: during.scheduled - before.scheduled }, { posts: 1, scheduled: 1 });

    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, serviceUnavailable, 100);
    await h.env.sleep(10.5 * 60_000);
    const waiting = await row(id);
    assert.deepEqual({ status: waiting.status, retry_count: waiting.retry_count, error_message: waiting.error_message }, { status: 'scheduled', retry_count: 1, error_message: null });
    const seen = await h.api.request('GET', `/api/v1/posts/${id}`);
    assert.equal(seen.body.data.retry_count, 1);

    await h.env.sleep('3 minutes');
    assert.equal((await row(id)).retry_count, 2, 'second attempt 1 minute after the first');

    assert.deepEqual(await h.settle(id), { outcome: 'failed' });
    const failed = await row(id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.retry_count, 4, 'the first attempt and three retries');
    assert.equal(typeof failed.error_message, 'string');
    assert.match(failed.error_message!, /X/);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'flaky').length, 0);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
  });

  it('a retry that succeeds publishes once and keeps the retry_count of the misses', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'second time lucky', schedule_at: inMinutes(20).toISOString() } });
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, serviceUnavailable, 1);
    assert.deepEqual(await h.settle(res.body.data.id), { outcome: 'published', firstComment: null });
    const published = await row(res.body.data.id);
    assert.deepEqual({ status: published.status, retry_count: published.retry_count }, { status: 'published', retry_count: 1 });
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'second time lucky').length, 1);
  });

  /** A post of its own account (no spacing clash with the suite's others) that has failed twice: its next try is due 5 minutes after the second (16 min). */
  const failedTwice = async (text: string, failures: number) => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: inMinutes(10).toISOString() } });
    assert.equal(res.status, 201, res.text);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, serviceUnavailable, failures);
    await h.env.sleep(11.5 * 60_000);
    const id: string = res.body.data.id;
    assert.equal((await row(id)).retry_count, 2);
    return id;
  };

  it('rescheduled during a retry wait, it goes out at the new time, not the retry\'s, and keeps its retry_count', async () => {
    const id = await failedTwice('moved while waiting', 2);
    await h.syncClock();
    const at = inMinutes(2);
    const moved = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: at.toISOString() } });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual([moved.body.data.status, moved.body.data.scheduled_at, moved.body.data.retry_count, moved.body.data.error_message], ['scheduled', at.toISOString(), 2, null]);
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    const published = await row(id);
    assert.ok(published.published_at!.getTime() >= at.getTime(), 'not before the new time');
    assert.ok(published.published_at!.getTime() < at.getTime() + 60_000, 'at the new time, not when the retry was due (2.5 minutes later)');
    assert.equal(published.retry_count, 2, 'the attempts made before stay counted');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'moved while waiting').length, 1);
  });

  it('a rescheduled post that keeps failing has the retries it had left, not three more', async () => {
    const id = await failedTwice('moved and still failing', 100);
    await h.syncClock();
    const moved = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: inMinutes(2).toISOString() } });
    assert.equal(moved.status, 200, moved.text);
    await h.env.sleep(2.5 * 60_000);
    assert.equal((await row(id)).retry_count, 3, 'attempted at the new time');
    assert.deepEqual(await h.settle(id), { outcome: 'failed' });
    assert.equal((await row(id)).retry_count, 4, 'the third retry was its last');
  });

  it('DELETE of a scheduled post cancels it: deleted, quota returned, the workflow ends, nothing published', async () => {
    await h.syncClock();
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'never mind', schedule_at: inMinutes(30).toISOString() } });
    const id = res.body.data.id;
    const del = await h.api.request('DELETE', `/api/v1/posts/${id}`);
    assert.deepEqual(del.body, { data: { id, deleted: true } });
    assert.deepEqual(await h.settle(id), { outcome: 'gone' });
    const cancelled = await row(id);
    assert.deepEqual({ status: cancelled.status, error_message: cancelled.error_message }, { status: 'deleted', error_message: null });
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'never mind').length, 0);
  });

  it('refuses a time within 5 minutes of another scheduled post on the account', async () => {
    await h.syncClock();
    const at = inMinutes(120);
    const first = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'slot one', schedule_at: at.toISOString() } });
    assert.equal(first.status, 201);
    const second = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: x.id, text: 'slot two', schedule_at: new Date(at.getTime() + 4 * 60_000).toISOString() },
    });
    assert.equal(second.status, 400);
    assert.equal(second.body.error.code, 'bad_request');
    assert.match(second.body.error.message, /5 minutes/);
    await h.api.request('DELETE', `/api/v1/posts/${first.body.data.id}`);
  });

  it('spacing: only the window around the new time is read, the time parsed in the account\'s timezone (posts and threads)', async () => {
    const berlin = await insertXAccount(h.db, h.api.userId, h.standIns.x, { timezone: 'Europe/Berlin' });
    const post = (text: string, scheduleAt: string, timezone?: string) =>
      h.api.request('POST', '/api/v1/posts', { body: { account_id: berlin.id, text, schedule_at: scheduleAt, ...(timezone ? { timezone } : {}) } });
    const first = await post('at nine UTC', '2027-01-15T09:00:00Z');
    assert.equal(first.status, 201, first.text);
    // 10:03 in Berlin (winter, UTC+1) is 09:03Z: 3 minutes from the first. Read as UTC it would be an hour away.
    const local = await post('three minutes later, Berlin time', '2027-01-15T10:03');
    assert.equal(local.status, 400, local.text);
    assert.match(local.body.error.message, /within 5 minutes of another scheduled post on this account \(2027-01-15T09:00:00\.000Z\)/);
    const thread = await h.api.request('POST', '/api/v1/threads', { body: { account_id: berlin.id, posts: [{ text: 'p1' }, { text: 'p2' }], schedule_at: '2027-01-15T08:56:01Z' } });
    assert.equal(thread.status, 400, thread.text);
    assert.equal((await post('the request\'s own timezone', '2027-01-15T09:04', 'UTC')).status, 400);
    const fiveApart = await post('five minutes later, Berlin time', '2027-01-15T10:05');
    assert.equal(fiveApart.status, 201, fiveApart.text);
    assert.equal(fiveApart.body.data.scheduled_at, '2027-01-15T09:05:00.000Z');
    // Rescheduled: the same window, without the post itself (a minute from its own old time is no clash).
    const reschedule = (scheduleAt: string) => h.api.request('PATCH', `/api/v1/posts/${fiveApart.body.data.id}`, { body: { schedule_at: scheduleAt } });
    const tooClose = await reschedule('2027-01-15T10:02');
    assert.equal(tooClose.status, 400, tooClose.text);
    assert.match(tooClose.body.error.message, /\(2027-01-15T09:00:00\.000Z\)/);
    const moved = await reschedule('2027-01-15T10:06');
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.data.scheduled_at, '2027-01-15T09:06:00.000Z');
    for (const id of [first.body.data.id, fiveApart.body.data.id]) await h.api.request('DELETE', `/api/v1/posts/${id}`);
  });

  it('the scheduled-post quota is hard: 429 usage_limit_exceeded without Retry-After', async () => {
    await h.syncClock();
    const user = await h.api.newUser('scale');
    await h.db.updateTable('users').set({ post_quota: 100, scheduled_quota: 1 }).where('id', '=', user.userId).execute();
    const account = await insertXAccount(h.db, user.userId, h.standIns.x);
    const ok = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: account.id, text: 'one', schedule_at: inMinutes(60).toISOString() } });
    assert.equal(ok.status, 201, ok.text);
    const refused = await h.api.request('POST', '/api/v1/posts', { key: user.apiKey, body: { account_id: account.id, text: 'two', schedule_at: inMinutes(90).toISOString() } });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), null);
    const month = new Date(h.now().getTime());
    const next = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
    assert.deepEqual(refused.body, {
      error: {
        code: 'usage_limit_exceeded',
        message: `Monthly scheduled-post quota reached: 1 of 1 scheduled post used this month on the Scale plan; this request needs 1 and 0 are left (resets ${next}, UTC)`,
      },
    });
    assert.equal((await h.db.selectFrom('posts').select('id').where('user_id', '=', user.userId).execute()).length, 1);
    await h.api.request('DELETE', `/api/v1/posts/${ok.body.data.id}`, { key: user.apiKey });
  });
});
