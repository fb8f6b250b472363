import assert from 'node:assert/strict';
import { usageFor } from '../../src/quota/quota';
import type { AccountRow } from '../../src/db/tables/accounts';
import { insertMastodonAccount, insertThreadsAccount, insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /api/v1/posts: single account, immediate, draft and GET', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness();
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());

  it('publishes now and answers 201 with the whole post once the platform answered', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'Hello from Herald' } });
    assert.equal(res.status, 201, res.text);
    const tweet = h.standIns.x.liveTweets().find((t) => t.text === 'Hello from Herald');
    assert.ok(tweet, 'the stand-in holds the post');
    const post = res.body.data;
    assert.match(post.id, uuid);
    assert.match(post.created_at, iso);
    assert.match(post.published_at, iso);
    assert.deepEqual(post, {
      id: post.id,
      platform: 'x',
      account_id: x.id,
      text: 'Hello from Herald',
      media_urls: null,
      first_comment: null,
      platform_post_id: tweet.id,
      platform_post_url: `https://x.com/${x.username}/status/${tweet.id}`,
      status: 'published',
      scheduled_at: null,
      published_at: post.published_at,
      thread_id: null,
      thread_order: null,
      group_id: null,
      error_message: null,
      retry_count: 0,
      created_at: post.created_at,
      hidden: false,
    });
    const got = await h.api.request('GET', `/api/v1/posts/${post.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, { data: post });
  });

  it('GET of another user\'s post or an unknown id is 404 not_found', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'mine' } });
    const other = await h.api.newUser();
    const foreign = await h.api.request('GET', `/api/v1/posts/${res.body.data.id}`, { key: other.apiKey });
    assert.deepEqual(foreign.body, { error: { code: 'not_found', message: `Post ${res.body.data.id} was not found` } });
    assert.equal(foreign.status, 404);
    const junk = await h.api.request('GET', '/api/v1/posts/not-a-uuid');
    assert.equal(junk.status, 404);
  });

  it('a platform refusal is 502 upstream_error with the adapter sentence; the row is kept as failed and the quota refunded', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    h.standIns.x.standIn.inject(
      { method: 'POST', path: '/2/tweets' },
      { kind: 'reply', response: { status: 403, headers: { 'content-type': 'application/json' }, json: { detail: 'You are not allowed to create a Tweet with duplicate content.', title: 'Forbidden', status: 403, type: 'about:blank' } } },
    );
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'refused one' } });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'upstream_error');
    assert.doesNotMatch(res.body.error.message, /about:blank/);
    const rows = await h.db.selectFrom('posts').selectAll().where('text', '=', 'refused one').execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.status, 'failed');
    assert.equal(rows[0]!.error_message, res.body.error.message);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
  });

  it('saves a draft: no platform call, no quota, warnings on the response', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const tweets = h.standIns.x.tweets().length;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'see https://example.com', draft: true } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'draft');
    assert.deepEqual(res.body.data.warnings, [
      {
        account_id: x.id,
        platform: 'x',
        code: 'x_link_posts_require_paid_plan',
        message:
          'text contains a link (https://example.com); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials',
      },
    ]);
    assert.equal(h.standIns.x.tweets().length, tweets);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
  });

  it('refuses an x link post on Free with 402 before anything is published or charged', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'read https://example.com/a' } });
    assert.equal(res.status, 402);
    assert.equal(res.body.error.code, 'x_link_posts_require_paid_plan');
    assert.equal((await h.db.selectFrom('posts').select('id').where('text', '=', 'read https://example.com/a').execute()).length, 0);
  });

  it('refuses a threads post with more than 5 different links with 400 before anything is written or charged', async () => {
    const threads = await insertThreadsAccount(h.db, h.api.userId, h.standIns.threads);
    const text = Array.from({ length: 6 }, (_, i) => `https://example.com/${i}`).join(' ');
    const usedBefore = await usageFor(h.db, h.api.userId, h.now());
    const at = new Date(h.now().getTime() + 3_600_000).toISOString();
    for (const body of [{ account_id: threads.id, text }, { account_id: threads.id, text, schedule_at: at }]) {
      const res = await h.api.request('POST', '/api/v1/posts', { body });
      assert.deepEqual([res.status, res.body], [400, { error: { code: 'bad_request', message: 'text has 6 different links; threads allows 5 in a post' } }]);
    }
    assert.equal((await h.db.selectFrom('posts').select('id').where('text', '=', text).execute()).length, 0);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), usedBefore);
  });

  it('answers the spec messages for body mistakes', async () => {
    const cases: Array<[unknown, string]> = [
      [{ account_id: x.id, text: 'a', scheduled_at: '2030-01-01T00:00:00Z' }, 'scheduled_at: not accepted; the request field is schedule_at (scheduled_at is its name in responses)'],
      [{ account_id: x.id, text: 'a', colour: 'red' }, 'Unknown field: colour'],
      [{ account_id: x.id }, 'text is required'],
      [{ text: 'a' }, 'account_id or account_ids is required'],
      [{ account_id: x.id, text: 'a', group_id: x.id }, 'group_id: cannot be sent; the service sets it when a request names account_ids'],
    ];
    for (const [body, message] of cases) {
      const res = await h.api.request('POST', '/api/v1/posts', { body });
      assert.deepEqual(res.body, { error: { code: 'bad_request', message } }, JSON.stringify(body));
      assert.equal(res.status, 400);
    }
  });

  it('an account that is not the user\'s or not active is 404 not_found', async () => {
    const other = await h.api.newUser();
    const theirs = await insertXAccount(h.db, other.userId, h.standIns.x);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: theirs.id, text: 'nope' } });
    assert.deepEqual(res.body, { error: { code: 'not_found', message: `Account ${theirs.id} was not found` } });
  });

  it("a fan-out's accounts and the plan come from one read: each account checked and answered in the order named", async () => {
    // issue 15: the accounts and the user's limits are one statement (the user's row left-joined with the accounts).
    const first = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const second = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const inactive = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'deactivated' }).where('id', '=', inactive.id).execute();
    const unknown = '00000000-0000-4000-8000-000000000015';
    const postsBefore = (await h.db.selectFrom('posts').select('id').where('user_id', '=', h.api.userId).execute()).length;
    const refusals: Array<[string[], string]> = [
      [[first.id, inactive.id], `Account ${inactive.id}: account is not active`],
      [[first.id, unknown, inactive.id], `Account ${unknown}: account was not found`],
    ];
    for (const [accountIds, message] of refusals) {
      const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: accountIds, text: 'refused as a whole' } });
      assert.deepEqual(res.body, { error: { code: 'not_found', message } });
    }
    assert.equal((await h.db.selectFrom('posts').select('id').where('user_id', '=', h.api.userId).execute()).length, postsBefore, 'nothing written');

    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [second.id, first.id], text: 'named order' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(
      res.body.data.results.map((r: { account_id: string; success: boolean }) => [r.account_id, r.success]),
      [
        [second.id, true],
        [first.id, true],
      ],
    );
  });

  it('publishes on mastodon too (the core knows no platform)', async () => {
    const m = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'toot' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'published');
    assert.equal(h.standIns.mastodon.liveStatuses().filter((s) => s.text === 'toot' || (s as { content?: string }).content?.includes('toot')).length, 1);
  });
});
