import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { backoffMs } from '../../src/comments/sync-windows';
import { usageMonth } from '../../src/quota/quota';
import { insertMastodonAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { commentsConfig, connectAccount, publish } from './actions-fixtures';

/**
 * A refresh that fails outside the platform call (README "Comment listing and sync", 2026-12-07): a comment the
 * platform answers malformed (no time) is left out, a U+0000 in a comment's text or author name is stored without it,
 * and anything else that throws (here PostgreSQL refusing a count past its integer) is a failed refresh like a
 * platform error: `error`, the doubling backoff, the sync given back. It used to leave no sync state and the sync
 * spent, retried every minute. And one refresh of a post at a time: a refresh still running (one Temporal gave up on
 * keeps going) holds the post's claim, and the next waits for it rather than running beside it.
 */
describe('comment sync: failures outside the platform call, overlapping refreshes', function () {
  this.timeout(300_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent', config: commentsConfig() });
  });
  after(async () => h?.stop());

  const list = async (postId: string, key?: string) => {
    await h.syncClock();
    return h.api.request('GET', `/api/v1/posts/${postId}/comments?sync=true`, key ? { key } : {});
  };
  const state = (postId: string) => h.db.selectFrom('comment_sync_states').selectAll().where('post_id', '=', postId).executeTakeFirstOrThrow();
  const syncsUsed = async (userId: string) => {
    await h.syncClock();
    const row = await h.db.selectFrom('usage_months').select('comment_syncs').where('user_id', '=', userId).where('month', '=', usageMonth(h.now())).executeTakeFirst();
    return row?.comment_syncs ?? 0;
  };
  const facebookPost = async (text: string) => {
    const { page } = h.standIns.facebook;
    const account = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    return publish(h, account.id, text);
  };

  it('a comment with a NUL is stored without it; one with no time is left out; the rest of the page is read', async () => {
    const post = await facebookPost('odd comments');
    const fb = h.standIns.facebook;
    fb.addExternalComment(post.platform_post_id, 'plain one');
    fb.addExternalComment(post.platform_post_id, 'nul\u0000inside', { id: '900000000000002', name: 'Nul\u0000Name' });
    const timeless = fb.addExternalComment(post.platform_post_id, 'no time');
    delete (timeless as { created_time?: string }).created_time;

    const res = await list(post.id);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.meta.sync.status, 'ok', JSON.stringify(res.body.meta.sync));
    const seen = res.body.data.map((c: { text: string; author: { display_name: string } }) => [c.text, c.author.display_name]).sort();
    assert.deepEqual(seen, [['nulinside', 'NulName'], ['plain one', 'Ada Visitor']]);
  });

  it('anything else that throws is a failed refresh: status error, the doubling backoff, the sync given back', async () => {
    // A user of its own: the other test's post keeps its background refreshes going, which count for its user.
    const user = await h.api.newUser('agent');
    const { page } = h.standIns.facebook;
    const connected = await h.api.request('POST', '/api/v1/accounts', { key: user.apiKey, body: { platform: 'facebook', page_id: page.id, access_token: page.token } });
    assert.ok(connected.status === 201 || connected.status === 200, connected.text);
    const post = await publish(h, connected.body.data.id, 'refused by the database', {}, user.apiKey);
    const loud = h.standIns.facebook.addExternalComment(post.platform_post_id, 'liked past an integer');
    loud.like_count = 3_000_000_000;

    const res = await list(post.id, user.apiKey);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.meta.sync.status, 'error', JSON.stringify(res.body.meta.sync));
    assert.match(res.body.meta.sync.reason, /The last comment refresh failed \(Herald could not process what Facebook answered\)/);
    const first = await state(post.id);
    assert.equal(first.consecutive_failures, 1);
    assert.equal(first.next_sync_after!.getTime() - first.updated_at.getTime(), backoffMs('facebook', 1, null));
    assert.equal(await syncsUsed(user.userId), 0, 'nothing was read: the sync is given back');

    await h.env.sleep(backoffMs('facebook', 1, null) + 1000);
    assert.equal((await list(post.id, user.apiKey)).body.meta.sync.status, 'error');
    const second = await state(post.id);
    assert.equal(second.consecutive_failures, 2);
    assert.equal(second.next_sync_after!.getTime() - second.updated_at.getTime(), backoffMs('facebook', 2, null), 'the wait doubles');

    loud.like_count = 3;
    await h.env.sleep(backoffMs('facebook', 2, null) + 1000);
    const recovered = await list(post.id, user.apiKey);
    assert.equal(recovered.body.meta.sync.status, 'ok');
    assert.deepEqual(recovered.body.data.map((c: { text: string }) => c.text), ['liked past an integer']);
    assert.equal(await syncsUsed(user.userId), 1);
  });

  it('a refresh holding the post\'s claim keeps the next from running beside it; a claim that ran out does not', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, account.id, 'one refresh at a time');
    h.standIns.mastodon.addReply(post.platform_post_id, h.standIns.mastodon.addAccount('overlapper'), 'read once');
    const contexts = () => h.standIns.mastodon.standIn.calls('GET', `/api/v1/statuses/${post.platform_post_id}/context`).length;
    const claim = (until: string) =>
      sql`insert into comment_sync_states (post_id, refresh_claim, refresh_claimed_until) values (${post.id}, gen_random_uuid(), now() + ${until}::interval)
          on conflict (post_id) do update set refresh_claim = excluded.refresh_claim, refresh_claimed_until = excluded.refresh_claimed_until`.execute(h.db);

    await claim('5 minutes'); // another refresh of this post is running
    const held = await list(post.id);
    assert.equal(held.status, 200, held.text);
    assert.deepEqual(held.body.data, []);
    assert.equal(contexts(), 0, 'nothing read beside the running refresh');

    await claim('-1 second'); // its worker died: the claim ran out
    const after = await list(post.id);
    assert.deepEqual(after.body.data.map((c: { text: string }) => c.text), ['read once']);
    assert.equal(contexts(), 1);
    const left = await sql<{ refresh_claim: string | null }>`select refresh_claim from comment_sync_states where post_id = ${post.id}`.execute(h.db);
    assert.equal(left.rows[0].refresh_claim, null, 'the refresh gave its claim back');
  });
});
