import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { usageFor } from '../../src/quota/quota';
import { insertAccount, insertMastodonAccount, insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

const mastodonRefusal = {
  kind: 'reply' as const,
  response: { status: 422, headers: { 'content-type': 'application/json' }, json: { error: 'Validation failed: Text is spam' } },
};

describe('Fan-out, DELETE, hide and unhide', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let x: AccountRow;
  let m: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    m = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
  });
  after(async () => h?.stop());
  afterEach(() => {
    h.standIns.x.standIn.clearFaults();
    h.standIns.mastodon.standIn.clearFaults();
  });

  it('publishes to every account and answers 201 with one result per account, in the order named', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', {
      body: { account_ids: [m.id, x.id], text: 'everywhere', account_configurations: { [x.id]: { text: 'everywhere, x edition' } } },
    });
    assert.equal(res.status, 201, res.text);
    const { group_id, results } = res.body.data;
    assert.match(group_id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      results.map((r: any) => [r.account_id, r.platform, r.success, r.status, r.error, r.post.group_id, r.post.text, r.post_id === r.post.id, r.platform_post_url === r.post.platform_post_url]),
      [
        [m.id, 'mastodon', true, 'published', null, group_id, 'everywhere', true, true],
        [x.id, 'x', true, 'published', null, group_id, 'everywhere, x edition', true, true],
      ],
    );
    const listed = await h.api.request('GET', `/api/v1/posts?group_id=${group_id}`);
    assert.equal(listed.body.data.length, 2);
  });

  it('answers 207 when one platform refuses: that account fails with upstream_error, the other is published', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    h.standIns.mastodon.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, mastodonRefusal, 1);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'half of it' } });
    assert.equal(res.status, 207, res.text);
    const [ok, refused] = res.body.data.results;
    assert.deepEqual([ok.success, ok.status, ok.error], [true, 'published', null]);
    assert.equal(refused.success, false);
    assert.equal(refused.status, 'failed');
    assert.equal(refused.platform_post_url, null);
    assert.equal(refused.error.code, 'upstream_error');
    assert.match(refused.error.message, /^Mastodon/);
    assert.equal(refused.post.error_message, refused.error.message);
    const after = await usageFor(h.db, h.api.userId, h.now());
    assert.equal(after.posts - before.posts, 1, 'the refused account was refunded');
  });

  it('validates every account before publishing: a refusal names the account and nothing is published or charged', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const tweets = h.standIns.x.tweets().length;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'with a comment', first_comment: 'first!' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'first_comment_unsupported');
    assert.ok(res.body.error.message.startsWith(`Account ${m.id}: `), res.body.error.message);
    assert.equal(h.standIns.x.tweets().length, tweets);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    assert.equal((await h.db.selectFrom('posts').select('id').where('text', '=', 'with a comment').execute()).length, 0);
  });

  it('refuses duplicate ids and more than 25 accounts with 400 bad_request', async () => {
    const dup = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, x.id], text: 'twice' } });
    assert.deepEqual(dup.body, { error: { code: 'bad_request', message: `account_ids names ${x.id} more than once` } });
    const many = Array.from({ length: 26 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const tooMany = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: many, text: 'crowd' } });
    assert.deepEqual(tooMany.body, { error: { code: 'bad_request', message: 'account_ids accepts at most 25 account ids; got 26' } });
  });

  it('a fan-out draft saves every account with warnings per result', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'later', first_comment: 'hi', draft: true } });
    assert.equal(res.status, 201, res.text);
    const [rx, rm] = res.body.data.results;
    assert.deepEqual([rx.success, rx.status, rm.success, rm.status], [true, 'draft', true, 'draft']);
    assert.deepEqual(rx.post.warnings, []);
    assert.deepEqual(rm.post.warnings.map((w: any) => [w.account_id, w.code]), [[m.id, 'first_comment_unsupported']]);

    const del = await h.api.request('DELETE', `/api/v1/posts/${rx.post_id}`);
    assert.deepEqual(del.body, { data: { id: rx.post_id, deleted: true, deleted_ids: [rx.post_id, rm.post_id].sort() } });
    const again = await h.api.request('GET', `/api/v1/posts/${rm.post_id}`);
    assert.equal(again.body.data.status, 'deleted');
  });

  it('DELETE of a published post deletes it on the platform first, then reports deleted (record kept)', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'short-lived' } });
    const id = res.body.data.id;
    const del = await h.api.request('DELETE', `/api/v1/posts/${id}`);
    assert.deepEqual(del.body, { data: { id, deleted: true } });
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === 'short-lived').length, 0);
    const got = await h.api.request('GET', `/api/v1/posts/${id}`);
    assert.equal(got.body.data.status, 'deleted');
    assert.equal(got.body.data.platform_post_id, res.body.data.platform_post_id);
  });

  it('DELETE that the platform refuses is 502 upstream_error and changes nothing; already gone counts as deleted', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'sticky' } });
    const id = res.body.data.id;
    h.standIns.mastodon.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: { status: 503, json: { error: 'down' } } }, 10);
    const refused = await h.api.request('DELETE', `/api/v1/posts/${id}`);
    assert.equal(refused.status, 502);
    assert.equal(refused.body.error.code, 'upstream_error');
    assert.equal((await h.api.request('GET', `/api/v1/posts/${id}`)).body.data.status, 'published');
    h.standIns.mastodon.standIn.clearFaults();
    h.standIns.mastodon.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: { status: 404, json: { error: 'Record not found' } } }, 1);
    const gone = await h.api.request('DELETE', `/api/v1/posts/${id}`);
    assert.deepEqual(gone.body, { data: { id, deleted: true } });
  });

  it('DELETE where the platform cannot delete is 501 delete_unsupported and nothing changes', async () => {
    const ig = await insertAccount(h.db, h.api.userId, { platform: 'instagram', platform_account_id: 'ig-1', username: 'igu', via: 'instagram', credentials: { access_token: 't' } });
    const post = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: ig.id, platform: 'instagram', text: '', status: 'published', platform_post_id: '1789', published_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await h.api.request('DELETE', `/api/v1/posts/${post.id}`);
    assert.equal(res.status, 501);
    assert.deepEqual(res.body, {
      error: {
        code: 'delete_unsupported',
        message: 'Instagram accounts connected with via: instagram cannot delete posts through the API; connect the account via facebook to delete. Nothing was changed.',
      },
    });
    assert.equal((await h.api.request('GET', `/api/v1/posts/${post.id}`)).body.data.status, 'published');

    // Disconnected, it is still told the truth: no connection could delete it (not "reconnect it to delete").
    const disconnected = await h.api.request('DELETE', `/api/v1/accounts/${ig.id}`);
    assert.equal(disconnected.status, 200, disconnected.text);
    const again = await h.api.request('DELETE', `/api/v1/posts/${post.id}`);
    assert.deepEqual([again.status, again.body], [501, res.body]);
  });

  it('hide and unhide a fan-out group as one unit; nothing reaches a platform', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'hide us' } });
    const ids = res.body.data.results.map((r: any) => r.post_id).sort();
    const requests = h.standIns.x.standIn.requests.length + h.standIns.mastodon.standIn.requests.length;
    const hidden = await h.api.request('POST', `/api/v1/posts/${ids[0]}/hide`);
    assert.deepEqual(hidden.body, { data: { id: ids[0], hidden: true, hidden_ids: ids } });
    const listed = await h.api.request('GET', '/api/v1/posts?limit=100');
    assert.equal(listed.body.data.filter((p: any) => ids.includes(p.id)).length, 0);
    const shown = await h.api.request('POST', `/api/v1/posts/${ids[1]}/unhide`);
    assert.deepEqual(shown.body, { data: { id: ids[1], hidden: false, hidden_ids: ids } });
    const again = await h.api.request('POST', `/api/v1/posts/${ids[1]}/unhide`);
    assert.equal(again.status, 200);
    assert.equal(h.standIns.x.standIn.requests.length + h.standIns.mastodon.standIn.requests.length, requests);
    const other = await h.api.newUser();
    const foreign = await h.api.request('POST', `/api/v1/posts/${ids[0]}/hide`, { key: other.apiKey });
    assert.equal(foreign.status, 404);
  });
});
