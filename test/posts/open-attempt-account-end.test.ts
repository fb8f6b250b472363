import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * A scheduled post whose attempt may have reached the platform (X answered 503 to a create that landed: its mark stays
 * open) waits for the retry that would look. Its account switched off or disconnected meanwhile cancelled it
 * (`deleted`, `account_deactivated`, quota refunded, `post.cancelled`): the user was told it never went out, and the
 * look never came. An account's end cannot be refused, so such a post is `failed` saying it may be live.
 */
describe('Posts: an account ended while a post of it may be live', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());

  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const eventsOf = async (postId: string) => (await h.db.selectFrom('events').select('type').where(sql`data->>'id'`, '=', postId).orderBy('id').execute()).map((e) => e.type);
  const landedThen503 = {
    kind: 'reply' as const,
    thenHandle: true,
    response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } },
  };

  /** A scheduled x post whose create landed and was answered 503 (its mark open), and one of the same account never tried. */
  async function mayBeLive(text: string) {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: at(10) } });
    assert.equal(res.status, 201, res.text);
    const later = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: `${text}, later`, schedule_at: at(120) } });
    assert.equal(later.status, 201, later.text);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, landedThen503, 1);
    await h.env.sleep(10.5 * 60_000);
    const waiting = await row(res.body.data.id);
    assert.deepEqual([waiting.status, waiting.publish_attempt_started_at !== null], ['scheduled', true], 'waiting for its retry, its attempt open');
    return { account, id: res.body.data.id as string, laterId: later.body.data.id as string };
  }

  for (const [end, request, said] of [
    ['switched off', (id: string) => h.api.request('PATCH', `/api/v1/accounts/${id}`, { body: { active: false } }), 'the account was switched off'],
    ['disconnected', (id: string) => h.api.request('DELETE', `/api/v1/accounts/${id}`), 'the account was disconnected'],
  ] as const) {
    it(`${end}: that post is failed saying it may be live (refunded, post.failed); the account's other scheduled post is cancelled as before`, async () => {
      const { account, id, laterId } = await mayBeLive(`landed, then the account ${end}`);
      const res = await request(account.id);
      assert.equal(res.status, 200, res.text);
      const failed = await row(id);
      assert.equal(failed.status, 'failed', `it was told cancelled though live on X: ${failed.status} ${failed.error_message}`);
      assert.match(failed.error_message ?? '', new RegExp(`^An earlier attempt to publish this post did not report back, so it may already be on the platform, and ${said} before Herald could check`));
      assert.deepEqual(await eventsOf(id), ['post.failed']);
      const reserved = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', id).execute();
      assert.ok(reserved.length > 0 && reserved.every((r) => r.state === 'refunded'), JSON.stringify(reserved));
      const cancelled = await row(laterId);
      assert.deepEqual([cancelled.status, cancelled.error_message], ['deleted', end === 'disconnected' ? 'account_disconnected' : 'account_deactivated']);
      await h.settle(id); // its workflow, woken, finds it settled and ends
      assert.equal((await row(id)).status, 'failed');
    });
  }

  it('an attempt that finds the account already off (its end missed the post) fails it saying so, not cancelled', async () => {
    const { account, id } = await mayBeLive('landed, then the account off unseen');
    // The account's end committed without reaching this post (the race the attempt's own check is for).
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'deactivated' }).where('id', '=', account.id).execute();
    assert.deepEqual(await h.settle(id), { outcome: 'failed' });
    const failed = await row(id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error_message ?? '', /may already be on the platform, and the account was switched off before Herald could check/);
  });
});
