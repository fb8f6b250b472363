import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import type { AccountRow } from '../../src/db/tables/accounts';
import { usageFor } from '../../src/quota/quota';
import { insertAccount, insertMastodonAccount, insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/** Thread drafts (warnings, one part allowed) and fan-out with `account_ids` (results carry `thread_id` and `posts`). */
describe('Threads: drafts, fan-out, listing by group, hiding as one unit', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;
  let mastodon: AccountRow;
  let linkedin: AccountRow;

  before(async function () {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    mastodon = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    linkedin = await insertAccount(h.db, h.api.userId, { platform: 'linkedin', platform_account_id: 'li-1', username: 'li', credentials: { access_token: 't' } });
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  it('a draft thread may have one part; it costs nothing and warns thread_not_native where there is no reply chain', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: linkedin.id, posts: [{ text: 'draft only part' }], draft: true } });
    assert.equal(res.status, 201, res.text);
    const [post] = res.body.data.posts;
    assert.equal(res.body.data.posts.length, 1);
    assert.deepEqual(
      { status: post.status, thread_id: post.thread_id, thread_order: post.thread_order, platform: post.platform },
      { status: 'draft', thread_id: res.body.data.thread_id, thread_order: 1, platform: 'linkedin' },
    );
    assert.deepEqual(post.warnings, [
      { account_id: linkedin.id, platform: 'linkedin', code: 'bad_request', message: 'A thread needs at least two parts; got 1' },
      { account_id: linkedin.id, platform: 'linkedin', code: 'thread_not_native', message: 'linkedin has no reply chain; each of the 1 parts publishes as a standalone post' },
    ]);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
  });

  it('a two-part draft on a native platform has warnings: []; DELETE of one part removes every part (deleted_ids)', async () => {
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'd1' }, { text: 'd2' }], draft: true } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.data.posts.map((p: any) => p.warnings), [[], []]);
    const ids = res.body.data.posts.map((p: any) => p.id);
    const del = await h.api.request('DELETE', `/api/v1/posts/${ids[0]}`);
    assert.deepEqual(del.body, { data: { id: ids[0], deleted: true, deleted_ids: [...ids].sort() } });
  });

  it('a draft thread promoted with a local schedule_at reads it as a draft post does: the request\'s timezone or the account\'s, not the draft\'s', async () => {
    await h.syncClock();
    const local = new Date(h.now().getTime() + 48 * 3_600_000).toISOString().slice(0, 16); // no offset
    const thread = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'tokyo one' }, { text: 'tokyo two' }], timezone: 'Asia/Tokyo', draft: true } });
    const post = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'tokyo alone', timezone: 'Asia/Tokyo', draft: true } });
    assert.equal(thread.status, 201, thread.text);
    assert.equal(post.status, 201, post.text);

    const postAnswer = await h.api.request('PATCH', `/api/v1/posts/${post.body.data.id}`, { body: { schedule_at: local } });
    const threadAnswer = await h.api.request('PATCH', `/api/v1/posts/${thread.body.data.posts[0].id}`, { body: { schedule_at: local } });
    assert.equal(postAnswer.status, 400, postAnswer.text);
    assert.deepEqual([threadAnswer.status, threadAnswer.body], [400, postAnswer.body], 'the account has no timezone and the request names none');

    const berlin = await h.api.request('PATCH', `/api/v1/posts/${thread.body.data.posts[0].id}`, { body: { schedule_at: local, timezone: 'Europe/Berlin' } });
    assert.equal(berlin.status, 200, berlin.text);
    assert.equal(berlin.body.data.scheduled_at, DateTime.fromISO(local, { zone: 'Europe/Berlin' }).toUTC().toISO({ suppressMilliseconds: false }));
  });

  it('fan-out: 201 with one result per account, each with thread_id and posts instead of post; GET ?group_id= lists every part', async () => {
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_ids: [x.id, mastodon.id], posts: [{ text: 'fan one' }, { text: 'fan two' }] } });
    assert.equal(res.status, 201, res.text);
    const { group_id, results } = res.body.data;
    assert.deepEqual(Object.keys(res.body.data).sort(), ['group_id', 'results']);
    assert.deepEqual(
      results.map((r: any) => Object.keys(r).sort()),
      [0, 1].map(() => ['account_id', 'error', 'platform', 'platform_post_url', 'post_id', 'posts', 'status', 'success', 'thread_id']),
    );
    for (const [i, account] of [x, mastodon].entries()) {
      const r = results[i];
      assert.deepEqual(
        { account_id: r.account_id, platform: r.platform, success: r.success, status: r.status, error: r.error, post_id: r.post_id, url: r.platform_post_url },
        { account_id: account.id, platform: account.platform, success: true, status: 'published', error: null, post_id: r.posts[0].id, url: r.posts[0].platform_post_url },
      );
      assert.deepEqual(r.posts.map((p: any) => [p.text, p.thread_id, p.thread_order, p.group_id, p.status]), [
        ['fan one', r.thread_id, 1, group_id, 'published'],
        ['fan two', r.thread_id, 2, group_id, 'published'],
      ]);
    }
    const [toot1, toot2] = ['fan one', 'fan two'].map((t) => h.standIns.mastodon.liveStatuses().find((s) => s.text === t || (s as any).content?.includes(t))!);
    assert.equal(toot2!.in_reply_to_id, toot1!.id);

    const listed = await h.api.request('GET', `/api/v1/posts?group_id=${group_id}`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.data.map((p: any) => p.id).sort(), results.flatMap((r: any) => r.posts.map((p: any) => p.id)).sort());

    const hidden = await h.api.request('POST', `/api/v1/posts/${results[1].posts[1].id}/hide`);
    assert.deepEqual(hidden.body, { data: { id: results[1].posts[1].id, hidden: true, hidden_ids: listed.body.data.map((p: any) => p.id).sort() } });
  });

  it('fan-out where one account refuses: 207, that result carries the thread error and thread_rollback, its rows are gone', async () => {
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 0 }, 1);
    h.standIns.x.standIn.inject(
      { method: 'POST', path: '/2/tweets' },
      { kind: 'reply', response: { status: 403, headers: { 'content-type': 'application/json' }, json: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 } } },
    );
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_ids: [x.id, mastodon.id], posts: [{ text: 'half one' }, { text: 'half two' }] } });
    assert.equal(res.status, 207, res.text);
    const [xr, mr] = res.body.data.results;
    const head = h.standIns.x.tweets().find((t) => t.text === 'half one')!;
    assert.deepEqual(xr, {
      account_id: x.id,
      platform: 'x',
      success: false,
      post_id: null,
      platform_post_url: null,
      status: null,
      thread_id: null,
      posts: null,
      error: {
        code: 'upstream_error',
        message: xr.error.message,
        thread_rollback: { platform: 'x', published: 1, rolled_back: [head.id], still_live: [], rollback_supported: true, quota_refunded: true },
      },
    });
    assert.match(xr.error.message, /^X .*\(part 2 of 2\)\. The 1 published part was deleted again\.$/);
    assert.equal(mr.success, true);
    assert.equal(mr.posts.length, 2);
    const rows = await h.db.selectFrom('posts').select(['account_id']).where('group_id', '=', res.body.data.group_id).execute();
    assert.deepEqual(rows.map((r) => r.account_id), [mastodon.id, mastodon.id]);
  });

  it('a fan-out validation failure names the account and writes nothing', async () => {
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_ids: [mastodon.id, x.id], posts: [{ text: 'ok' }, { text: 'x'.repeat(281) }] } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'bad_request');
    assert.match(res.body.error.message, new RegExp(`^Account ${x.id}: posts\\[1\\]\\.`));
    assert.equal((await h.db.selectFrom('posts').select('id').where('text', '=', 'ok').execute()).length, 0);
  });
  it('a fan-out draft thread promoted on one account stays in its group; the promoted drafts are gone from hide as from GET', async () => {
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_ids: [x.id, mastodon.id], posts: [{ text: 'grouped one' }, { text: 'grouped two' }], draft: true } });
    assert.equal(res.status, 201, res.text);
    const { group_id, results } = res.body.data;
    const [xDrafts, mastodonDrafts] = results.map((r: any) => r.posts.map((p: any) => p.id));

    await h.syncClock();
    const promoted = await h.api.request('PATCH', `/api/v1/posts/${xDrafts[0]}`, { body: { schedule_at: new Date(h.now().getTime() + 3 * 60 * 60_000).toISOString() } });
    assert.equal(promoted.status, 200, promoted.text);
    assert.equal(promoted.body.data.group_id, group_id, 'the thread a draft of the fan-out became is in the fan-out');
    const newParts: string[] = promoted.body.data.rescheduled_post_ids;

    const listed = await h.api.request('GET', `/api/v1/posts?group_id=${group_id}`);
    assert.deepEqual(listed.body.data.map((p: any) => p.id).sort(), [...newParts, ...mastodonDrafts].sort());

    const gone = await h.api.request('POST', `/api/v1/posts/${xDrafts[0]}/hide`);
    assert.equal(gone.status, 404, gone.text);
    const hidden = await h.api.request('POST', `/api/v1/posts/${newParts[0]}/hide`);
    assert.deepEqual(hidden.body, { data: { id: newParts[0], hidden: true, hidden_ids: [...newParts, ...mastodonDrafts].sort() } });
    const stillShown = await h.db.selectFrom('posts').select('hidden').where('id', 'in', xDrafts).execute();
    assert.deepEqual(stillShown.map((r) => r.hidden), [false, false], 'the promoted drafts are left as they were');
  });
});
