import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { refreshIfDue } from '../../src/comments/sync';
import { backoffMs } from '../../src/comments/sync-windows';
import { createLogger } from '../../src/logger';
import { usageMonth } from '../../src/quota/quota';
import { insertMastodonAccount, testSealedBox } from '../posts/fixtures';
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

  // Called directly (the workflow's activity calls it the same way), so a test can lower the page limit and pick the time.
  const refresh = (postId: string, at: number, maxPages?: number) =>
    refreshIfDue({ db: h.db, logger: createLogger('silent'), adapters: h.standIns.adapters, sealedBox: testSealedBox }, { postId, mode: 'true', now: at }, { maxPages });
  const deletedOf = async (postId: string) =>
    Object.fromEntries((await h.db.selectFrom('comments').select(['text', 'deleted']).where('post_id', '=', postId).execute()).map((c) => [c.text, c.deleted]));

  it('a refresh stopped at the page limit is reported as stopped part-way (error, not ok) and infers no deletion', async () => {
    const post = await facebookPost('more comments than the page limit reads');
    const fb = h.standIns.facebook;
    for (const text of ['early one', 'early two']) fb.addExternalComment(post.platform_post_id, text);
    await refresh(post.id, Date.now());
    assert.equal((await state(post.id)).status, 'ok');
    // 30 newer comments: newest first, one page of 25 does not reach the two stored ones.
    for (let i = 0; i < 30; i += 1) fb.addExternalComment(post.platform_post_id, `later ${i}`);

    const at = Date.now() + 5 * 60_000;
    await refresh(post.id, at, 1);
    const cut = await state(post.id);
    assert.equal(cut.status, 'error', 'a client must not take a part for the whole');
    assert.match(cut.reason ?? '', /^The last comment refresh stopped part-way, after 1 page of Facebook comments; the comments shown may be incomplete\. Next refresh after /);
    assert.equal(cut.synced_at!.getTime(), at, 'what it read is as of this refresh');
    assert.equal(cut.consecutive_failures, 1);
    assert.equal(cut.next_sync_after!.getTime() - at, backoffMs('facebook', 1, null));
    const stored = await deletedOf(post.id);
    assert.equal(Object.keys(stored).length, 27);
    assert.deepEqual([stored['early one'], stored['early two']], [false, false], 'comments not reached are not taken for deleted');

    const res = await h.api.request('GET', `/api/v1/posts/${post.id}/comments?sync=false`);
    assert.deepEqual([res.body.meta.sync.status, res.body.meta.sync.reason], ['error', cut.reason], 'the listing says so');
  });

  it('a refresh whose time ran out is reported as stopped part-way when its time ran out (error), not as an answer Herald could not process', async () => {
    const post = await facebookPost('a refresh Temporal gives up on');
    const fb = h.standIns.facebook;
    for (let i = 0; i < 30; i += 1) fb.addExternalComment(post.platform_post_id, `comment ${i}`);
    // The activity's hook throws once Temporal gave up on it (here before the second page).
    let pagesAllowed = 1;
    const givenUpOn = (at: number) =>
      refreshIfDue(
        { db: h.db, logger: createLogger('silent'), adapters: h.standIns.adapters, sealedBox: testSealedBox },
        { postId: post.id, mode: 'true', now: at },
        { onPage: () => { if (pagesAllowed-- <= 0) throw new Error('Activity cancelled: TIMED_OUT'); } },
      );
    const at = Date.now();
    await givenUpOn(at);
    const cut = await state(post.id);
    assert.equal(cut.status, 'error');
    assert.match(cut.reason ?? '', /^The last comment refresh stopped part-way, when its time ran out, after 1 page of Facebook comments; the comments shown may be incomplete\. Next refresh after /);
    assert.equal(cut.synced_at!.getTime(), at, 'what it read is as of this refresh');
    assert.equal(cut.consecutive_failures, 1);
    assert.equal(Object.keys(await deletedOf(post.id)).length, 25, 'the page it read is stored');

    // Given up on before its first page: nothing read, the snapshot as of the last sync.
    pagesAllowed = 0;
    await givenUpOn(at + 60 * 60_000);
    const none = await state(post.id);
    assert.equal(none.status, 'error');
    assert.match(none.reason ?? '', /^The last comment refresh ran out of time before reading any Facebook comments; the comments shown are from the last sync\. Next refresh after /);
    assert.equal(none.synced_at!.getTime(), at);
    assert.equal(none.consecutive_failures, 2);
  });

  it('a stored comment that comes back malformed is not taken for deleted; one listed without an id leaves every stored one alone', async () => {
    const post = await facebookPost('comments that turn odd');
    const fb = h.standIns.facebook;
    const odd = fb.addExternalComment(post.platform_post_id, 'turns timeless');
    const gone = fb.addExternalComment(post.platform_post_id, 'really removed');
    fb.addExternalComment(post.platform_post_id, 'stays plain');
    await refresh(post.id, Date.now());
    assert.deepEqual(await deletedOf(post.id), { 'turns timeless': false, 'really removed': false, 'stays plain': false });

    delete (odd as { created_time?: string }).created_time;
    await refresh(post.id, Date.now() + 5 * 60_000);
    assert.equal((await state(post.id)).status, 'ok');
    assert.deepEqual(await deletedOf(post.id), { 'turns timeless': false, 'really removed': false, 'stays plain': false }, 'listed, only unreadable');

    // A comment listed with no id at all could be any stored one: this read concludes nothing about deletions.
    fb.comments.delete(gone.id);
    const nameless = fb.addExternalComment(post.platform_post_id, 'no id');
    delete (nameless as { id?: string }).id;
    await refresh(post.id, Date.now() + 10 * 60_000);
    assert.deepEqual(await deletedOf(post.id), { 'turns timeless': false, 'really removed': false, 'stays plain': false });

    // Once every comment listed reads, a complete read concludes again.
    fb.comments.forEach((c, key) => c === nameless && fb.comments.delete(key));
    await refresh(post.id, Date.now() + 15 * 60_000);
    assert.deepEqual(await deletedOf(post.id), { 'turns timeless': false, 'really removed': true, 'stays plain': false });
  });
  it('bluesky: a reply answered blockedPost or notFoundPost is kept, with the stored replies under it; a removed one is deleted', async () => {
    const { bluesky } = h.standIns;
    const me = bluesky.addAccount({ handle: `unshown${Math.floor(Math.random() * 1e9)}.bsky.test` });
    const account = await connectAccount(h, { platform: 'bluesky', handle: me.handle, app_password: me.appPassword, service_url: bluesky.origin });
    const post = await publish(h, account.id, 'replies the AppView will not show');
    const fan = bluesky.addAccount({ handle: `unshownfan${Math.floor(Math.random() * 1e9)}.bsky.test` });
    const blocked = bluesky.reply(post.platform_post_id, fan, 'from a blocked author');
    const under = bluesky.reply(blocked.uri, fan, 'under the blocked one');
    bluesky.reply(under.uri, fan, 'deeper under it');
    const lost = bluesky.reply(post.platform_post_id, fan, 'not found later');
    bluesky.reply(lost.uri, fan, 'under the not found one');
    const removed = bluesky.reply(post.platform_post_id, fan, 'really removed');
    await refresh(post.id, Date.now());
    assert.equal(Object.values(await deletedOf(post.id)).filter((d) => d === false).length, 6);

    bluesky.showAs(blocked.uri, 'blocked');
    bluesky.showAs(lost.uri, 'notFound');
    bluesky.remove(removed.uri);
    await refresh(post.id, Date.now() + 2 * 60_000);
    assert.equal((await state(post.id)).status, 'ok');
    assert.deepEqual(await deletedOf(post.id), {
      'from a blocked author': false,
      'under the blocked one': false,
      'deeper under it': false,
      'not found later': false,
      'under the not found one': false,
      'really removed': true,
    });
  });
});
