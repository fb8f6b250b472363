import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AccountRow } from '../../src/db/tables/accounts';
import { insertPublishedPost } from '../comments/actions-fixtures';
import { insertAccount } from '../posts/fixtures';
import { type TestApi, startApi } from '../helpers/api';

/**
 * Every timestamp a client sends is accepted only within the years 0001–9999 (UTC), one rule (src/db/timestamp.ts):
 * `since=-010000-01-01T00:00:00Z` was a 500 (PostgreSQL cannot hold 10001 BC), and a `schedule_at` or `expires_at`
 * whose offset carried it into year 0 or 10000 was stored and shown back as `+010000-...`. (The listing cursor's
 * times: test/comments/listing.test.ts.)
 */
describe('timestamp inputs: years 0001 to 9999', function () {
  this.timeout(120_000);
  let api: TestApi;
  let account: AccountRow;
  before(async () => {
    api = await startApi({ plan: 'enterprise' });
    account = await insertAccount(api.deps.db, api.userId, {
      platform: 'mastodon', platform_account_id: `m-${randomUUID()}`, username: 'years',
      credentials: { access_token: 't' }, settings: { instance_url: 'https://mastodon.example' },
    });
  });
  after(() => api.close());

  const range = 'between the years 0001 and 9999 (UTC)';

  it('since: a signed or out-of-range year is 400 bad_request; the edges of the range are listed', async () => {
    const post = await insertPublishedPost(api.deps.db, api.userId, account, `p-${randomUUID()}`);
    const list = (since: string) => api.request('GET', `/api/v1/posts/${post.id}/comments?sync=false&since=${encodeURIComponent(since)}`);
    for (const since of ['-010000-01-01T00:00:00Z', '-000001-01-01', '+275760-09-13T00:00:00Z', '+010000-01-01', '0000-06-01', '9999-12-31T23:59:59-01:00']) {
      const res = await list(since);
      assert.deepEqual([res.status, res.body], [400, { error: { code: 'bad_request', message: `since: must be an ISO 8601 date or date-time ${range}` } }], since);
    }
    for (const since of ['0001-01-01', '9999-12-31T23:59:59Z', '+002026-01-01']) {
      const res = await list(since);
      assert.equal(res.status, 200, `${since}: ${res.text}`);
    }
  });

  it('schedule_at: an offset or zone that carries four digits into year 0 or 10000 is 400 bad_request', async () => {
    const draft = (schedule_at: string, timezone?: string) =>
      api.request('POST', '/api/v1/posts', { body: { account_ids: [account.id], text: 'years', draft: true, schedule_at, ...(timezone ? { timezone } : {}) } });
    for (const [at, zone] of [['9999-12-31T23:59:59-14:00'], ['0001-01-01T00:00:00+14:00'], ['9999-12-31T23:30:00', 'America/New_York']] as const) {
      const res = await draft(at, zone);
      assert.deepEqual([res.status, res.body], [400, { error: { code: 'bad_request', message: `Account ${account.id}: schedule_at ${at} must be ${range}` } }], at);
    }
    const edge = await draft('9999-12-31T23:59:59Z');
    assert.equal(edge.status, 201, edge.text);
  });

  it('expires_at of a new key: year 10000 through its offset is 400 bad_request', async () => {
    const res = await api.request('POST', '/api/v1/keys', { body: { name: 'far', expires_at: '9999-12-31T23:59:59-14:00' } });
    assert.deepEqual([res.status, res.body], [400, { error: { code: 'bad_request', message: `expires_at: must be ${range}` } }]);
    const edge = await api.request('POST', '/api/v1/keys', { body: { name: 'far', expires_at: '9999-12-31T23:59:59Z' } });
    assert.deepEqual([edge.status, edge.body.data?.expires_at], [201, '9999-12-31T23:59:59.000Z']);
  });
});
