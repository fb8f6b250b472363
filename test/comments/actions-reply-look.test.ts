import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AccountRow } from '../../src/db/tables/accounts';
import { LOOKUP_PAGES, replyAttemptId } from '../../src/comments/actions-reply';
import { nextLookWaitMs } from '../../src/comments/actions-reply-left';
import { reconcilePosts } from '../../src/posts/reconcile';
import { loadLimits, refundQuota, reserveQuota, usageFor } from '../../src/quota/quota';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { comment, commentsConfig, publish, snapshot } from './actions-fixtures';

/**
 * The look for a reply that may have gone out (a lost answer, a keyed retry of an attempt that never reported back):
 * it reads the post's comments until it has read the answered comment (listings are newest first, or list a
 * comment's replies with it), at most `LOOKUP_PAGES` pages; one that cannot tell sends nothing and refunds nothing.
 */
describe('comment actions: the look for a reply that may have gone out', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let x: AccountRow;
  // A database of its own: the reconciler's look reads every user's posts, and in the shared one it would start the
  // workflows of other files' posts on this harness's worker and stand-ins (their sends counted as this file's).
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase();
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig(), database });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => {
    await h?.stop();
    await database?.close();
  });
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const replyPath = (postId: string, commentId: string) => `/api/v1/posts/${postId}/comments/${commentId}/reply`;
  const usage = () => usageFor(h.db, h.api.userId, new Date());
  const reservation = async (chargeId: string) => (await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', chargeId).execute()).map((r) => r.state);
  const sends = () => h.standIns.x.standIn.calls('POST', '/2/tweets').length;

  /**
   * An x post with one stranger's comment, stored; then what a keyed attempt whose process stopped mid-call left:
   * its reservation and attempt row (20 minutes old), the reply it published on X, and `newer` comments by others
   * posted after that reply.
   */
  async function stoppedAttemptUnder(label: string, newer: number) {
    const post = await publish(h, x.id, `busy post ${label}`);
    const stranger = h.standIns.x.addUser({ username: `busy${Math.floor(Math.random() * 1e6)}` });
    h.standIns.x.addReply(post.platform_post_id, stranger, `answer me ${label}`);
    await snapshot(h, post.id);
    const target = await comment(h, post.id, `answer me ${label}`);
    const text = `my answer ${label}`;
    const key = `busy-${target.id}`;
    const chargeId = replyAttemptId(h.api.userId, target.id, text, key);
    const limits = await loadLimits(h.db, h.api.userId);
    await h.db.transaction().execute(async (trx) => {
      const startedAt = new Date(Date.now() - 20 * 60_000);
      await trx.insertInto('reply_attempts').values({ charge_id: chargeId, user_id: h.api.userId, post_id: post.id, comment_id: target.id, text, started_at: startedAt }).execute();
      await reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: chargeId, kind: 'post' }], now: new Date() });
    });
    const me = { id: x.platform_account_id, username: x.username } as Parameters<typeof h.standIns.x.addReply>[1];
    h.standIns.x.addReply(target.platform_comment_id, me, text);
    for (let i = 0; i < newer; i++) h.standIns.x.addReply(post.platform_post_id, stranger, `later comment ${i} ${label}`);
    const retry = () => h.api.request('POST', replyPath(post.id, target.id), { body: { text }, headers: { 'Idempotency-Key': key } });
    return { post, target, text, chargeId, retry };
  }

  it('a reply pushed past three pages by newer comments is found by a keyed retry: recorded and charged once, never sent again', async () => {
    // 350 newer comments: the reply is on the fourth page of 100 (the look used to read three and send again).
    const { target, text, chargeId, retry } = await stoppedAttemptUnder('four pages', 350);
    const before = await usage();
    const sent = sends();
    const res = await retry();
    assert.equal(res.status, 201, res.text);
    assert.equal(sends(), sent, 'nothing sent');
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === text).length, 1);
    assert.equal(res.body.data.platform_comment_id, h.standIns.x.liveTweets().find((t) => t.text === text)!.id);
    assert.deepEqual(await reservation(chargeId), ['spent']);
    assert.equal((await usage()).posts, before.posts, 'charged once: the stopped attempt\'s reservation');
    assert.equal((await h.db.selectFrom('comments').select('reply_comment_id').where('id', '=', target.id).executeTakeFirstOrThrow()).reply_comment_id, res.body.data.id);
  });

  it('a reply further down than a look reads: the keyed retry answers 502 saying it cannot tell, sends nothing and returns the reservation; the reconciler keeps looking, each wait doubled, and gives up after a day; a keyed retry then holds nothing either', async () => {
    const { text, chargeId, retry } = await stoppedAttemptUnder('past the look', LOOKUP_PAGES * 100 + 20);
    const before = await usage();
    const sent = sends();
    const res = await retry();
    assert.equal(sends(), sent, 'nothing sent');
    assert.deepEqual([res.status, res.body.error?.code], [502, 'upstream_error'], res.text);
    assert.match(res.body.error.message, /more comments on this post since the answered one than one look reads \(10 pages\)\. Herald could not tell whether an earlier attempt with this Idempotency-Key published the reply on X, so nothing was sent; that attempt is charged only if its reply is found \(Herald keeps looking for up to a day\)\./);
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === text).length, 1);
    // The 502 says nothing changed: the month's usage does not count the reply while Herald looks (it used to, for up to a day).
    assert.deepEqual(await reservation(chargeId), ['refunded']);
    assert.equal((await usage()).posts, before.posts - 1, 'the held reservation returned with the 502');

    // The reconciler cannot tell either: it keeps the attempt for its next look (given up after a day).
    await reconcilePosts(h.reconcilerRuntime());
    assert.deepEqual(await reservation(chargeId), ['refunded']);
    assert.equal(sends(), sent, 'the reconciler never sends');

    // Each look that cannot tell waits longer for the next (2, 4, 8... minutes, at most an hour): the next minute's
    // look leaves it alone (it used to read 10 pages again every minute for a day).
    const searches = () => h.standIns.x.standIn.calls('GET', '/2/tweets/search/recent').length;
    const attempt = () => h.db.selectFrom('reply_attempts').select(['looks', sql<number>`extract(epoch from next_look_at - now()) * 1000`.as('wait')]).where('charge_id', '=', chargeId).executeTakeFirstOrThrow();
    const first = await attempt();
    assert.equal(first.looks, 1);
    assert.ok(first.wait > 1.5 * 60_000 && first.wait <= 2 * 60_000, `the first wait is 2 minutes (${first.wait} ms)`);
    const searched = searches();
    await reconcilePosts(h.reconcilerRuntime());
    assert.equal(searches(), searched, 'not looked for again before its wait');
    await h.db.updateTable('reply_attempts').set({ next_look_at: sql`now() - interval '1 second'` }).where('charge_id', '=', chargeId).execute();
    await reconcilePosts(h.reconcilerRuntime());
    assert.ok(searches() > searched, 'looked for again once due');
    const second = await attempt();
    assert.equal(second.looks, 2);
    assert.ok(second.wait > 3.5 * 60_000 && second.wait <= 4 * 60_000, `the wait doubles (${second.wait} ms)`);
    assert.deepEqual([nextLookWaitMs(3), nextLookWaitMs(6), nextLookWaitMs(7), nextLookWaitMs(40)], [8 * 60_000, 60 * 60_000, 60 * 60_000, 60 * 60_000]);

    // A day on, it is given up on at the next look without waiting out its backoff: refunded, nothing charged.
    await h.db.updateTable('reply_attempts').set({ started_at: sql`now() - interval '25 hours'`, next_look_at: sql`now() + interval '1 hour'` }).where('charge_id', '=', chargeId).execute();
    await reconcilePosts(h.reconcilerRuntime());
    assert.deepEqual(await reservation(chargeId), ['refunded']);
    assert.equal((await usage()).posts, before.posts - 1, 'nothing charged');
    assert.equal(sends(), sent, 'nothing sent');
    await reconcilePosts(h.reconcilerRuntime());
    assert.equal(await h.db.selectFrom('reply_attempts').select('charge_id').where('charge_id', '=', chargeId).executeTakeFirst(), undefined, 'no longer looked for');

    // A keyed retry after the give-up cannot tell either: the same 502, nothing sent, and nothing held (it reserved
    // again before its look, and used to keep that reservation, counted, for another day); looked for again.
    const again = await retry();
    assert.deepEqual([again.status, again.body.error?.code], [502, 'upstream_error'], again.text);
    assert.equal(sends(), sent, 'nothing sent');
    assert.deepEqual(await reservation(chargeId), ['refunded', 'refunded']);
    assert.equal((await usage()).posts, before.posts - 1, 'nothing held');
    const row = await h.db.selectFrom('reply_attempts').select(['looks', 'untold_at']).where('charge_id', '=', chargeId).executeTakeFirstOrThrow();
    assert.equal(row.looks, 0);
    assert.ok(row.untold_at, 'the reconciler looks for it again');
  });

  it('a lost answer whose look cannot read: 502 saying the outcome is not known, the reservation returned; the keyed retry finds the reply and charges it once', async () => {
    const post = await publish(h, x.id, 'lost answer, unreadable');
    const stranger = h.standIns.x.addUser({ username: `unread${Math.floor(Math.random() * 1e6)}` });
    h.standIns.x.addReply(post.platform_post_id, stranger, 'answer me, unreadable');
    await snapshot(h, post.id);
    const target = await comment(h, post.id, 'answer me, unreadable');
    const text = 'sent, answer lost, look refused';
    const keyed = { body: { text }, headers: { 'Idempotency-Key': `unreadable-${target.id}` } };
    const before = await usage();
    // The create lands but its answer is lost; the adapter's look (the account's posts) and Herald's (the conversation) cannot read.
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reset', thenHandle: true });
    h.standIns.x.rateLimit(/^\/2\/users\/[^/]+\/tweets$/, Math.floor(Date.now() / 1000) + 60);
    h.standIns.x.rateLimit('/2/tweets/search/recent', Math.floor(Date.now() / 1000) + 60);
    const lost = await h.api.request('POST', replyPath(post.id, target.id), keyed);
    assert.deepEqual([lost.status, lost.body.error?.code], [502, 'upstream_error'], lost.text);
    assert.equal((await usage()).posts, before.posts, 'the 502 says nothing changed: the reservation is returned while Herald looks');
    assert.match(lost.body.error.message, /^X did not confirm whether the reply was published; check the account before sending it again\. Herald could not tell from the post's comments either \(.+\); it keeps looking for up to a day, and the reply is charged only if it is found \(the comment then shows it as its reply\); otherwise nothing is charged\.$/);
    const sent = sends();

    h.standIns.x.standIn.clearFaults();
    const retry = await h.api.request('POST', replyPath(post.id, target.id), keyed);
    assert.equal(retry.status, 201, retry.text);
    assert.equal(sends(), sent, 'the retry sent nothing');
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === text).length, 1);
    assert.equal((await usage()).posts, before.posts + 1, 'charged once');
  });

  it('a lost answer whose look cannot read, found later by the reconciler: recorded and charged then, once', async () => {
    const post = await publish(h, x.id, 'lost answer, found later');
    const stranger = h.standIns.x.addUser({ username: `later${Math.floor(Math.random() * 1e6)}` });
    h.standIns.x.addReply(post.platform_post_id, stranger, 'answer me, found later');
    await snapshot(h, post.id);
    const target = await comment(h, post.id, 'answer me, found later');
    const text = 'sent, answer lost, found by the reconciler';
    const before = await usage();
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reset', thenHandle: true });
    h.standIns.x.rateLimit(/^\/2\/users\/[^/]+\/tweets$/, Math.floor(Date.now() / 1000) + 60);
    h.standIns.x.rateLimit('/2/tweets/search/recent', Math.floor(Date.now() / 1000) + 60);
    const lost = await h.api.request('POST', replyPath(post.id, target.id), { body: { text } });
    assert.deepEqual([lost.status, lost.body.error?.code], [502, 'upstream_error'], lost.text);
    assert.deepEqual(await usage(), before, 'nothing counted while Herald looks');
    h.standIns.x.standIn.clearFaults();

    await h.db.updateTable('reply_attempts').set({ started_at: sql`now() - interval '20 minutes'` }).where('comment_id', '=', target.id).execute();
    await reconcilePosts(h.reconcilerRuntime());
    const chargeId = (await h.db.selectFrom('quota_reservations').select('post_id').where('post_id', 'in', h.db.selectFrom('reply_attempts').select('charge_id').where('comment_id', '=', target.id)).executeTakeFirstOrThrow()).post_id;
    assert.deepEqual((await reservation(chargeId)).sort(), ['refunded', 'spent'], 'charged when found, once');
    assert.equal((await usage()).posts, before.posts + 1);
    const answered = await h.db.selectFrom('comments').select(['replied', 'reply_comment_id']).where('id', '=', target.id).executeTakeFirstOrThrow();
    assert.equal(answered.replied, true);
    await reconcilePosts(h.reconcilerRuntime());
    assert.equal((await usage()).posts, before.posts + 1, 'not charged again by the next look');
    assert.equal(await h.db.selectFrom('reply_attempts').select('charge_id').where('charge_id', '=', chargeId).executeTakeFirst(), undefined);
  });

  it('on Free, a reply found after its month filled: counted past the hard limit (it is out), no overage (Free bills none)', async () => {
    const post = await publish(h, x.id, 'lost answer, found after the month filled');
    const stranger = h.standIns.x.addUser({ username: `filled${Math.floor(Math.random() * 1e6)}` });
    h.standIns.x.addReply(post.platform_post_id, stranger, 'answer me, month filled');
    await snapshot(h, post.id);
    const target = await comment(h, post.id, 'answer me, month filled');
    const text = 'sent, answer lost, found once the month was full';
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reset', thenHandle: true });
    h.standIns.x.rateLimit(/^\/2\/users\/[^/]+\/tweets$/, Math.floor(Date.now() / 1000) + 60);
    h.standIns.x.rateLimit('/2/tweets/search/recent', Math.floor(Date.now() / 1000) + 60);
    const lost = await h.api.request('POST', replyPath(post.id, target.id), { body: { text } });
    assert.deepEqual([lost.status, lost.body.error?.code], [502, 'upstream_error'], lost.text);
    h.standIns.x.standIn.clearFaults();
    // The user is on Free and its returned reservation was taken by other posts meanwhile: the month is full.
    const month = (await usage()).month;
    await h.db.updateTable('users').set({ plan: 'free' }).where('id', '=', h.api.userId).execute();
    const before = await h.db.updateTable('usage_months').set({ posts: 30, overage: 0 }).where('user_id', '=', h.api.userId).where('month', '=', month).returning(['posts']).executeTakeFirstOrThrow();
    try {
      await h.db.updateTable('reply_attempts').set({ started_at: sql`now() - interval '20 minutes'` }).where('comment_id', '=', target.id).execute();
      await reconcilePosts(h.reconcilerRuntime());
      const answered = await h.db.selectFrom('comments').select(['replied']).where('id', '=', target.id).executeTakeFirstOrThrow();
      assert.equal(answered.replied, true, 'found and recorded');
      const after = await usage();
      assert.deepEqual([after.posts, after.overage], [before.posts + 1, 0], 'the month counts the reply that is out; Free records no overage');
    } finally {
      await h.db.updateTable('users').set({ plan: 'starter' }).where('id', '=', h.api.userId).execute();
    }
  });

  it('the reconciler looks from the attempt\'s first charge: a keyed retry that reserved again after a refund does not hide a reply the first call published', async () => {
    const post = await publish(h, x.id, 'reserved twice');
    const stranger = h.standIns.x.addUser({ username: `twice${Math.floor(Math.random() * 1e6)}` });
    h.standIns.x.addReply(post.platform_post_id, stranger, 'answer me, twice reserved');
    await snapshot(h, post.id);
    const target = await comment(h, post.id, 'answer me, twice reserved');
    const text = 'published by the first call';
    const chargeId = replyAttemptId(h.api.userId, target.id, text, `twice-${target.id}`);
    const limits = await loadLimits(h.db, h.api.userId);
    // The first attempt, 40 minutes ago: charged, then refunded (its look found nothing yet).
    await h.db.transaction().execute((trx) => reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: chargeId, kind: 'post' }], now: new Date() }));
    await refundQuota(h.db, [chargeId]);
    await sql`update quota_reservations set created_at = now() - interval '40 minutes' where post_id = ${chargeId}`.execute(h.db);
    // Its keyed retry, 20 minutes ago, reserved again (moving the attempt's start) and its process stopped.
    await h.db.transaction().execute(async (trx) => {
      await trx.insertInto('reply_attempts').values({ charge_id: chargeId, user_id: h.api.userId, post_id: post.id, comment_id: target.id, text, started_at: new Date(Date.now() - 20 * 60_000) }).execute();
      await reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: chargeId, kind: 'post' }], now: new Date() });
    });
    // The first call's reply, made 35 minutes ago.
    const me = { id: x.platform_account_id, username: x.username } as Parameters<typeof h.standIns.x.addReply>[1];
    h.standIns.x.addReply(target.platform_comment_id, me, text).created_at = new Date(Date.now() - 35 * 60_000).toISOString();

    await reconcilePosts(h.reconcilerRuntime());
    assert.deepEqual((await reservation(chargeId)).sort(), ['refunded', 'spent'], 'found and charged once');
    assert.equal((await h.db.selectFrom('comments').select('replied').where('id', '=', target.id).executeTakeFirstOrThrow()).replied, true);
  });

  it('x: a reply to a comment on a thread\'s later part is looked for in the first part\'s conversation, where X files it: found, not sent again', async () => {
    const made = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'x part one for a look' }, { text: 'x part two for a look' }] } });
    assert.equal(made.status, 201, made.text);
    const two = (made.body.data.posts as Array<{ id: string; platform_post_id: string }>)[1];
    const stranger = h.standIns.x.addUser({ username: `parts${Math.floor(Math.random() * 1e6)}` });
    const answered = h.standIns.x.addReply(two.platform_post_id, stranger, 'answer part two, looked for');
    await h.syncClock();
    const listed = await h.api.request('GET', `/api/v1/posts/${two.id}/comments?sync=true`);
    const target = (listed.body.data as Array<{ id: string; text: string }>).find((c) => c.text === 'answer part two, looked for');
    assert.ok(target, listed.text);
    // What a keyed attempt whose process stopped mid-call left: its reservation, and its reply on X.
    const text = 'my answer under part two';
    const key = `part-two-${target.id}`;
    const chargeId = replyAttemptId(h.api.userId, target.id, text, key);
    const limits = await loadLimits(h.db, h.api.userId);
    await h.db.transaction().execute((trx) => reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: chargeId, kind: 'post' }], now: new Date() }));
    const me = { id: x.platform_account_id, username: x.username } as Parameters<typeof h.standIns.x.addReply>[1];
    h.standIns.x.addReply(answered.id, me, text);
    const sent = sends();

    const res = await h.api.request('POST', replyPath(two.id, target.id), { body: { text }, headers: { 'Idempotency-Key': key } });
    assert.equal(sends(), sent, 'nothing sent');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.platform_comment_id, h.standIns.x.liveTweets().find((t) => t.text === text)!.id);
    assert.deepEqual(await reservation(chargeId), ['spent']);
  });
});
