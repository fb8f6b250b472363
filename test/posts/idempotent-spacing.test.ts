import assert from 'node:assert/strict';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * The 5-minute spacing refusal depends on another post of the account: once that post moves or goes, the same create
 * passes, so a create refused so with an Idempotency-Key is not kept for replay (a `PassingRefusal`,
 * api/idempotency.ts `keptForReplay`). It was replayed for 24 hours after the other post had gone.
 */
describe('Idempotency-Key: a create refused by the 5-minute spacing is not replayed', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  before(async () => {
    h = await startPostsHarness({ plan: 'starter' });
  });
  after(async () => h?.stop());

  const at = (minutes: number) => new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 2 * 3_600_000 + minutes * 60_000).toISOString();

  it('runs again with the same key once the other scheduled post is cancelled', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const other = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'the first in the slot', schedule_at: at(0) } });
    assert.equal(other.status, 201, other.text);
    const send = () =>
      h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'two minutes later', schedule_at: at(2) }, headers: { 'Idempotency-Key': `spacing-${account.id}` } });

    const refused = await send();
    assert.deepEqual([refused.status, refused.body.error.code], [400, 'bad_request'], refused.text);
    assert.match(refused.body.error.message, /within 5 minutes of another scheduled post/);
    const cancelled = await h.api.request('DELETE', `/api/v1/posts/${other.body.data.id}`);
    assert.equal(cancelled.status, 200, cancelled.text);
    const created = await send();
    assert.deepEqual([created.status, created.headers.get('idempotent-replay')], [201, null], created.text);
    assert.equal(created.body.data.status, 'scheduled');
    const replayed = await send();
    assert.deepEqual([replayed.status, replayed.headers.get('idempotent-replay'), replayed.body], [201, 'true', created.body]);
  });

  it('runs again with the same key once the other post of a fan-out is moved', async () => {
    const first = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const second = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const other = await h.api.request('POST', '/api/v1/posts', { body: { account_id: second.id, text: 'holds the slot', schedule_at: at(30) } });
    assert.equal(other.status, 201, other.text);
    const send = () =>
      h.api.request('POST', '/api/v1/posts', { body: { account_ids: [first.id, second.id], text: 'to both', schedule_at: at(31) }, headers: { 'Idempotency-Key': `spacing-fan-${first.id}` } });

    const refused = await send();
    assert.deepEqual([refused.status, refused.body.error.message.startsWith(`Account ${second.id}: `)], [400, true], refused.text);
    const moved = await h.api.request('PATCH', `/api/v1/posts/${other.body.data.id}`, { body: { schedule_at: at(50) } });
    assert.equal(moved.status, 200, moved.text);
    const created = await send();
    assert.deepEqual([created.status, created.headers.get('idempotent-replay')], [201, null], created.text);
    assert.deepEqual(created.body.data.results.map((r: { success: boolean }) => r.success), [true, true]);
  });

  it('a schedule_at in the past is still replayed (it never passes)', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const send = () =>
      h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'too late', schedule_at: '2020-01-01T00:00:00Z' }, headers: { 'Idempotency-Key': `past-${account.id}` } });
    const refused = await send();
    assert.equal(refused.status, 400, refused.text);
    const again = await send();
    assert.deepEqual([again.status, again.headers.get('idempotent-replay'), again.body], [400, 'true', refused.body]);
  });
});
