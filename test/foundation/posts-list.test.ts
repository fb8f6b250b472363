import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { NewPostRow } from '../../src/db/tables/posts';
import { type TestApi, startApi } from '../helpers/api';

describe('GET /api/v1/posts', () => {
  let api: TestApi;
  let accountId: string;
  let otherAccountId: string;
  const groupId = randomUUID();
  const ids: Record<string, string> = {};
  let minute = 0;

  async function insertPost(name: string, values: Partial<NewPostRow>) {
    minute++;
    const row = await api.deps.db
      .insertInto('posts')
      .values({
        user_id: api.userId,
        account_id: accountId,
        platform: 'x',
        text: name,
        status: 'published',
        media: null,
        configuration: null,
        first_comment_text: null,
        first_comment_status: null,
        first_comment_comment_id: null,
        first_comment_error: null,
        platform_post_id: null,
        platform_post_url: null,
        scheduled_at: null,
        timezone: null,
        published_at: null,
        thread_id: null,
        thread_order: null,
        group_id: null,
        error_message: null,
        promoted_from_draft_id: null,
        promoted_to_id: null,
        created_at: new Date(Date.UTC(2026, 0, 1, 0, minute)),
        ...values,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids[name] = row.id;
  }

  async function insertAccount(userId: string, platform: 'x' | 'bluesky', inactiveReason: 'disconnected' | null = null) {
    const row = await api.deps.db
      .insertInto('accounts')
      .values({
        user_id: userId,
        platform,
        platform_account_id: randomUUID(),
        username: 'someone',
        display_name: null,
        profile_url: null,
        via: null,
        kind: null,
        inactive_reason: inactiveReason,
        active: inactiveReason === null,
        timezone: null,
        // Disconnecting wipes the credentials (migration 0011).
        credentials_sealed: inactiveReason === 'disconnected' ? null : 'sealed',
        settings: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  before(async () => {
    api = await startApi({ scopes: ['posts:read'] });
    accountId = await insertAccount(api.userId, 'x');
    otherAccountId = await insertAccount(api.userId, 'bluesky');
    const gone = await insertAccount(api.userId, 'x', 'disconnected');
    await insertPost('published', {
      platform_post_id: '1790',
      platform_post_url: 'https://x.com/someone/status/1790',
      published_at: new Date(Date.UTC(2026, 0, 1, 0, 30, 0, 123)),
      first_comment_text: 'first!',
      first_comment_status: 'posted',
      first_comment_comment_id: '7b1f6a64-7c0c-4b7e-9d0e-1b2f3c4d5e6f',
      media: JSON.stringify([{ url: 'https://example.com/a.png', alt: 'a' }]),
      retry_count: 1,
    });
    await insertPost('scheduled', { status: 'scheduled', scheduled_at: new Date(Date.UTC(2030, 5, 1, 12)) });
    await insertPost('draft', { status: 'draft' });
    await insertPost('hidden', { hidden: true });
    await insertPost('group-draft', { status: 'draft', group_id: groupId });
    await insertPost('group-published', { group_id: groupId, account_id: otherAccountId, platform: 'bluesky' });
    await insertPost('failed', { status: 'failed', error_message: 'x refused the post: duplicate content' });
    await insertPost('deleted', { status: 'deleted' });
    await insertPost('promoted-draft', { status: 'draft', promoted_to_id: randomUUID() });
    await insertPost('disconnected', { account_id: gone });
    const stranger = await api.newUser('free');
    const strangerAccount = await insertAccount(stranger.userId, 'x');
    await insertPost('stranger', { user_id: stranger.userId, account_id: strangerAccount });
  });
  after(() => api.close());

  const names = (body: { data: Array<{ id: string }> }) =>
    body.data.map((post) => Object.keys(ids).find((name) => ids[name] === post.id));

  it('lists newest first, leaving out drafts, hidden posts, promoted drafts and other users\' posts', async () => {
    const res = await api.request('GET', '/api/v1/posts');
    assert.equal(res.status, 200);
    assert.deepEqual(names(res.body), ['disconnected', 'deleted', 'failed', 'group-published', 'scheduled', 'published']);
  });

  it('returns the post object of the spec', async () => {
    const res = await api.request('GET', `/api/v1/posts?account_id=${accountId}&status=published`);
    assert.deepEqual(res.body.data, [
      {
        id: ids.published,
        platform: 'x',
        account_id: accountId,
        text: 'published',
        media_urls: ['https://example.com/a.png'],
        first_comment: { text: 'first!', status: 'posted', comment_id: '7b1f6a64-7c0c-4b7e-9d0e-1b2f3c4d5e6f', error: null },
        platform_post_id: '1790',
        platform_post_url: 'https://x.com/someone/status/1790',
        status: 'published',
        scheduled_at: null,
        published_at: '2026-01-01T00:30:00.123Z',
        thread_id: null,
        thread_order: null,
        group_id: null,
        error_message: null,
        retry_count: 1,
        created_at: '2026-01-01T00:01:00.000Z',
        hidden: false,
      },
    ]);
  });

  it('shows account_id null once the account is disconnected', async () => {
    const res = await api.request('GET', '/api/v1/posts?limit=1');
    assert.equal(res.body.data[0].id, ids.disconnected);
    assert.equal(res.body.data[0].account_id, null);
  });

  it('filters by status; status=draft lists drafts', async () => {
    assert.deepEqual(names((await api.request('GET', '/api/v1/posts?status=draft')).body), ['group-draft', 'draft']);
    assert.deepEqual(names((await api.request('GET', '/api/v1/posts?status=scheduled')).body), ['scheduled']);
  });

  it('filters by group_id, drafts included', async () => {
    assert.deepEqual(names((await api.request('GET', `/api/v1/posts?group_id=${groupId}`)).body), ['group-published', 'group-draft']);
  });

  it('filters by account_id', async () => {
    assert.deepEqual(names((await api.request('GET', `/api/v1/posts?account_id=${otherAccountId}`)).body), ['group-published']);
  });

  it('includes hidden posts with include_hidden=true', async () => {
    const res = await api.request('GET', '/api/v1/posts?include_hidden=true');
    assert.deepEqual(names(res.body), ['disconnected', 'deleted', 'failed', 'group-published', 'hidden', 'scheduled', 'published']);
    assert.equal(res.body.data.find((post: { id: string }) => post.id === ids.hidden).hidden, true);
  });

  it('pages with limit and offset', async () => {
    assert.deepEqual(names((await api.request('GET', '/api/v1/posts?limit=2')).body), ['disconnected', 'deleted']);
    assert.deepEqual(names((await api.request('GET', '/api/v1/posts?limit=2&offset=2')).body), ['failed', 'group-published']);
    assert.deepEqual(names((await api.request('GET', '/api/v1/posts?limit=100&offset=6')).body), []);
  });

  it('refuses bad parameters with 400 bad_request naming them', async () => {
    const cases: Array<[string, string]> = [
      ['group_id=abc', 'group_id: must be a UUID'],
      ['account_id=42', 'account_id: must be a UUID'],
      ['limit=101', 'limit: must be an integer between 1 and 100'],
      ['limit=0', 'limit: must be an integer between 1 and 100'],
      ['limit=ten', 'limit: must be an integer between 1 and 100'],
      ['limit=1&limit=2', 'limit: must be an integer between 1 and 100'],
      ['offset=-1', 'offset: must be an integer at least 0'],
      ['status=sent', 'status: must be one of draft, scheduled, publishing, published, failed, deleted'],
      ['include_hidden=yes', 'include_hidden: must be true or false'],
      ['sort=asc', 'Unknown query parameter: sort'],
    ];
    for (const [query, message] of cases) {
      const res = await api.request('GET', `/api/v1/posts?${query}`);
      assert.deepEqual(res.body, { error: { code: 'bad_request', message } }, query);
      assert.equal(res.status, 400);
    }
  });
});
