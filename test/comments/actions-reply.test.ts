import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AccountRow } from '../../src/db/tables/accounts';
import { replyAttemptId } from '../../src/comments/actions-reply';
import { reconcilePosts } from '../../src/posts/reconcile';
import { loadLimits, refundQuota, reserveQuota, usageFor, usageMonth } from '../../src/quota/quota';
import { insertMastodonAccount, insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { comment, commentsConfig, connectAccount, insertPublishedPost, publish, snapshot } from './actions-fixtures';

describe('comment actions: reply', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig() });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const replyPath = (postId: string, commentId: string) => `/api/v1/posts/${postId}/comments/${commentId}/reply`;
  const reply = (postId: string, commentId: string, body: unknown, key?: string) =>
    h.api.request('POST', replyPath(postId, commentId), { body, ...(key ? { key } : {}) });
  const stored = (id: string) => h.db.selectFrom('comments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const usage = (userId = h.api.userId) => usageFor(h.db, userId, new Date());

  /** An x post of `account` with one reply by a stranger, stored as a refresh would store it. */
  async function xPostWithComment(account: AccountRow, text: string, key?: string) {
    const post = await publish(h, account.id, `post for ${text}`, {}, key);
    const stranger = h.standIns.x.addUser({ username: `stranger${Math.floor(Math.random() * 1e6)}` });
    h.standIns.x.addReply(post.platform_post_id, stranger, text);
    await snapshot(h, post.id);
    return { post, target: await comment(h, post.id, text) };
  }

  it('x: 201 with the reply in the comment shape, own: true, stored at once; the answered comment is replied; one post of quota', async () => {
    const { post, target } = await xPostWithComment(x, 'what do you think?');
    const before = await usage();
    const res = await reply(post.id, target.id, { text: 'we think so too' });
    assert.equal(res.status, 201, res.text);
    const data = res.body.data;
    const tweet = h.standIns.x.liveTweets().find((t) => t.text === 'we think so too')!;
    assert.deepEqual(tweet.referenced_tweets, [{ type: 'replied_to', id: target.platform_comment_id }]);
    assert.deepEqual(
      { ...data, id: undefined, created_at: undefined },
      {
        id: undefined, post_id: post.id, platform: 'x', platform_comment_id: tweet.id, platform_parent_id: target.platform_comment_id,
        author: { handle: x.username, display_name: x.username, platform_id: x.platform_account_id, avatar_url: null },
        text: 'we think so too', created_at: undefined, likes: 0, replies: 0, hidden: false, deleted: false, own: true, replied: false, replied_at: null, reply_comment_id: null,
      },
    );
    const answered = await stored(target.id);
    assert.deepEqual([answered.replied, answered.reply_comment_id, answered.replied_at instanceof Date], [true, data.id, true]);
    assert.equal((await usage()).posts, before.posts + 1);
    const spent = await h.db.selectFrom('quota_reservations').select(['kind', 'state']).where('user_id', '=', h.api.userId).where('state', '=', 'reserved').execute();
    assert.deepEqual(spent, [], 'nothing left reserved');

    await snapshot(h, post.id);
    assert.equal((await comment(h, post.id, 'we think so too')).id, data.id, 'a refresh keeps the stored reply and its id');
  });

  it('replies on every other platform that replies: bluesky, mastodon, facebook, instagram, threads and a linkedin Page', async () => {
    const { bluesky, mastodon, facebook, instagram, threads, linkedin } = h.standIns;
    const me = bluesky.addAccount({ handle: 'herald.bsky.test' });
    const bsky = await connectAccount(h, { platform: 'bluesky', handle: me.handle, app_password: me.appPassword, service_url: bluesky.origin });
    const masto = await insertMastodonAccount(h.db, h.api.userId, mastodon);
    const fb = await connectAccount(h, { platform: 'facebook', page_id: facebook.page.id, access_token: facebook.page.token });
    const ig = await connectAccount(h, { platform: 'instagram', access_token: instagram.user.igToken });
    const th = await connectAccount(h, { platform: 'threads', access_token: threads.user.token });
    const li = await connectAccount(h, { platform: 'linkedin', access_token: linkedin.member.token, organization_id: String(linkedin.organization.id) });
    const mediaId = '17900000000000999';
    instagram.media.set(mediaId, { id: mediaId, kind: 'feed', caption: 'ig', timestamp: new Date().toISOString(), shortcode: 'Cxyz', containerId: 'c9', children: [] });
    const igPost = await insertPublishedPost(h.db, h.api.userId, { id: ig.id, platform: 'instagram' }, mediaId, 'ig');

    const cases: Array<[string, string, (platformPostId: string, text: string) => void]> = [
      ['bluesky', bsky.id, (id, text) => bluesky.reply(id, bluesky.addAccount({ handle: 'fan.bsky.test' }), text)],
      ['mastodon', masto.id, (id, text) => mastodon.addReply(id, mastodon.addAccount('fan'), text)],
      ['facebook', fb.id, (id, text) => facebook.addExternalComment(id, text)],
      ['instagram', ig.id, (id, text) => instagram.addExternalComment(id, text)],
      ['threads', th.id, (id, text) => threads.addExternalReply(id, text)],
      ['linkedin', li.id, (id, text) => linkedin.addExternalComment(id, text)],
    ];
    for (const [platform, accountId, addComment] of cases) {
      const postId = platform === 'instagram' ? igPost.id : (await publish(h, accountId, `${platform} post to answer`)).id;
      const platformPostId = (await h.db.selectFrom('posts').select('platform_post_id').where('id', '=', postId).executeTakeFirstOrThrow()).platform_post_id!;
      addComment(platformPostId, `${platform} fan comment`);
      await snapshot(h, postId);
      const target = await comment(h, postId, `${platform} fan comment`);
      const res = await reply(postId, target.id, { text: `${platform} thanks you` });
      assert.equal(res.status, 201, `${platform}: ${res.text}`);
      assert.deepEqual([res.body.data.own, res.body.data.platform, res.body.data.text], [true, platform, `${platform} thanks you`]);
      assert.equal((await stored(target.id)).reply_comment_id, res.body.data.id, platform);
      const rows = await snapshot(h, postId);
      const replies = rows.filter((r) => r.text === `${platform} thanks you`);
      assert.deepEqual(replies.map((r) => [r.id, r.own]), [[res.body.data.id, true]], `${platform}: the platform lists the reply under the id Herald stored`);
    }
  });

  it('a reply to a reply: on facebook and instagram it is filed under the top-level comment, as the platform files it; its listing and the parent_id filter agree', async () => {
    const { facebook, instagram } = h.standIns;
    const fb = await connectAccount(h, { platform: 'facebook', page_id: facebook.page.id, access_token: facebook.page.token });
    const ig = await connectAccount(h, { platform: 'instagram', access_token: instagram.user.igToken });
    const mediaId = '17900000000000777';
    instagram.media.set(mediaId, { id: mediaId, kind: 'feed', caption: 'ig', timestamp: new Date().toISOString(), shortcode: 'Cabc', containerId: 'c7', children: [] });
    const igPost = await insertPublishedPost(h.db, h.api.userId, { id: ig.id, platform: 'instagram' }, mediaId, 'ig');
    const cases: Array<[string, string, (target: string, text: string) => { id: string }]> = [
      ['facebook', (await publish(h, fb.id, 'facebook post with a conversation')).id, (target, text) => facebook.addExternalComment(target, text)],
      ['instagram', igPost.id, (target, text) => instagram.addExternalComment(target, text)],
    ];
    for (const [platform, postId, addComment] of cases) {
      const platformPostId = (await h.db.selectFrom('posts').select('platform_post_id').where('id', '=', postId).executeTakeFirstOrThrow()).platform_post_id!;
      const top = addComment(platformPostId, `${platform} top-level`);
      addComment(top.id, `${platform} an answer to it`);
      await snapshot(h, postId);
      const answered = await comment(h, postId, `${platform} an answer to it`);
      assert.equal(answered.platform_parent_id, top.id, platform);
      const res = await reply(postId, answered.id, { text: `${platform} joining in` });
      assert.equal(res.status, 201, `${platform}: ${res.text}`);
      assert.equal(res.body.data.platform_parent_id, top.id, `${platform}: filed under the top-level comment, not the reply it answers`);
      const listed = (await snapshot(h, postId)).find((r) => r.text === `${platform} joining in`)!;
      assert.deepEqual([listed.id, listed.platform_parent_id], [res.body.data.id, top.id], `${platform}: the platform's listing says the same`);
      const underTop = await h.api.request('GET', `/api/v1/posts/${postId}/comments?sync=false&parent_id=${top.id}`);
      assert.deepEqual(underTop.body.data.map((c: { text: string }) => c.text).sort(), [`${platform} an answer to it`, `${platform} joining in`]);
      assert.equal((await stored(answered.id)).reply_comment_id, res.body.data.id, `${platform}: the answered comment is the one marked replied`);
    }
  });

  it('text: missing (or null, or no body), blank or over the platform limit is 400 validation_error naming the limit; a non-string is 400 bad_request; nothing sent or charged', async () => {
    const { post, target } = await xPostWithComment(x, 'say something');
    const tweets = h.standIns.x.tweets().length;
    const before = await usage();
    const missing = await reply(post.id, target.id, {});
    assert.deepEqual([missing.status, missing.body], [400, { error: { code: 'validation_error', message: 'text is required for a reply' } }]);
    assert.equal((await reply(post.id, target.id, { text: '   ' })).body.error.code, 'validation_error');
    assert.deepEqual((await reply(post.id, target.id, { text: null })).body, missing.body, 'text: null is no text');
    assert.deepEqual((await reply(post.id, target.id, undefined)).body, missing.body, 'no body at all is no text');
    const long = await reply(post.id, target.id, { text: 'a'.repeat(281) });
    assert.deepEqual([long.status, long.body], [400, { error: { code: 'validation_error', message: 'text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280' } }]);
    assert.equal((await reply(post.id, target.id, { text: 'a'.repeat(280) })).status, 201, 'exactly the limit is fine');
    const wrongType = await reply(post.id, target.id, { text: 5 });
    assert.deepEqual([wrongType.status, wrongType.body.error.code], [400, 'bad_request']);
    assert.equal((await reply(post.id, target.id, { text: 'hi', extra: 1 })).body.error.code, 'bad_request');
    assert.equal(h.standIns.x.tweets().length, tweets + 1);
    assert.equal((await usage()).posts, before.posts + 1);
  });

  it('x links: 402 on Free before anything is sent or charged; billed on a paid plan; own X credentials are exempt', async () => {
    const free = await h.api.newUser('free');
    const freeX = await insertXAccount(h.db, free.userId, h.standIns.x);
    const { post, target } = await xPostWithComment(freeX, 'link please', free.apiKey);
    const tweets = h.standIns.x.tweets().length;
    const before = await usage(free.userId);
    const refused = await reply(post.id, target.id, { text: 'see https://example.com/doc' }, free.apiKey);
    assert.equal(refused.status, 402, refused.text);
    assert.deepEqual(refused.body.error, {
      code: 'x_link_posts_require_paid_plan',
      message: 'text contains a link (https://example.com/doc); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials',
    });
    assert.equal(h.standIns.x.tweets().length, tweets);
    assert.deepEqual(await usage(free.userId), before);

    const paid = await xPostWithComment(x, 'link on paid');
    const beforePaid = await usage();
    assert.equal((await reply(paid.post.id, paid.target.id, { text: 'see example.com' })).status, 201);
    const afterPaid = await usage();
    assert.deepEqual([afterPaid.posts, afterPaid.x_link_posts], [beforePaid.posts + 1, beforePaid.x_link_posts + 1]);

    const ownCreds = await insertXAccount(h.db, free.userId, h.standIns.x, { ownCredentials: true });
    const exempt = await xPostWithComment(ownCreds, 'link with own credentials', free.apiKey);
    assert.equal((await reply(exempt.post.id, exempt.target.id, { text: 'see example.com' }, free.apiKey)).status, 201);
    assert.equal((await usage(free.userId)).x_link_posts, 0);
  });

  it('Free with the monthly post quota spent: 429 usage_limit_exceeded, nothing sent', async () => {
    const free = await h.api.newUser('free');
    const freeX = await insertXAccount(h.db, free.userId, h.standIns.x);
    const { post, target } = await xPostWithComment(freeX, 'quota test', free.apiKey);
    await h.db.updateTable('usage_months').set({ posts: 30 }).where('user_id', '=', free.userId).where('month', '=', usageMonth(new Date())).execute();
    const tweets = h.standIns.x.tweets().length;
    const res = await reply(post.id, target.id, { text: 'over quota' }, free.apiKey);
    assert.equal(res.status, 429, res.text);
    assert.equal(res.body.error.code, 'usage_limit_exceeded');
    assert.equal(res.headers.get('retry-after'), null);
    assert.equal(h.standIns.x.tweets().length, tweets);
    assert.equal((await stored(target.id)).replied, false);
  });

  it('a platform refusal is 502 upstream_error: nothing stored, the comment not replied, the reservation refunded', async () => {
    const { post, target } = await xPostWithComment(x, 'refuse me');
    const before = await usage();
    const count = await h.db.selectFrom('comments').select((eb) => eb.fn.countAll<string>().as('n')).where('post_id', '=', post.id).executeTakeFirstOrThrow();
    h.standIns.x.standIn.inject(
      { method: 'POST', path: '/2/tweets' },
      { kind: 'reply', response: { status: 403, headers: { 'content-type': 'application/problem+json' }, json: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 } } },
    );
    const res = await reply(post.id, target.id, { text: 'refused reply' });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'upstream_error');
    assert.match(res.body.error.message, /^X /);
    assert.doesNotMatch(res.body.error.message, /not permitted to perform/, 'the platform body is not passed through');
    assert.deepEqual(await usage(), before);
    const after = await h.db.selectFrom('comments').select((eb) => eb.fn.countAll<string>().as('n')).where('post_id', '=', post.id).executeTakeFirstOrThrow();
    assert.equal(after.n, count.n);
    assert.equal((await stored(target.id)).replied, false);
    const refunded = await h.db.selectFrom('quota_reservations').select('state').where('user_id', '=', h.api.userId).where('state', '=', 'refunded').execute();
    assert.ok(refunded.length >= 1);
  });

  it('a platform rate limit is 502 upstream_error with the wait X names in Retry-After, and nothing charged', async () => {
    const { post, target } = await xPostWithComment(x, 'rate limited');
    const before = await usage();
    h.standIns.x.rateLimit('/2/tweets', Math.floor(Date.now() / 1000) + 120);
    const res = await reply(post.id, target.id, { text: 'slow down' });
    assert.deepEqual([res.status, res.body.error.code], [502, 'upstream_error'], res.text);
    const wait = Number(res.headers.get('retry-after'));
    assert.ok(wait > 60 && wait <= 121, `Retry-After ${wait}`);
    assert.deepEqual(await usage(), before);
  });

  it('a lost answer: the reply is looked for on the platform; found, it is recorded once; not found, 502 says so and nothing is charged', async () => {
    const first = await xPostWithComment(x, 'lost answer, published');
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reset', thenHandle: true });
    const before = await usage();
    const found = await reply(first.post.id, first.target.id, { text: 'made it through' });
    assert.equal(found.status, 201, found.text);
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === 'made it through').length, 1, 'sent once');
    assert.equal(found.body.data.platform_comment_id, h.standIns.x.liveTweets().find((t) => t.text === 'made it through')!.id);
    assert.equal((await usage()).posts, before.posts + 1);

    const second = await xPostWithComment(x, 'lost answer, not published');
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reset' });
    const middle = await usage();
    const lost = await reply(second.post.id, second.target.id, { text: 'never arrived' });
    assert.equal(lost.status, 502, lost.text);
    assert.equal(lost.body.error.code, 'upstream_error');
    assert.match(lost.body.error.message, /could not be found on the post afterwards, so nothing was charged; list the comments with sync=true before sending it again\.$/);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'never arrived').length, 0, 'never sent a second time');
    assert.deepEqual(await usage(), middle);
    assert.equal((await stored(second.target.id)).replied, false);
  });

  it('a keyed request whose process stopped mid-call: its retry finds the published reply and records it once, or sends it when nothing is there', async () => {
    const account = x;
    const me = { id: account.platform_account_id, username: account.username } as Parameters<typeof h.standIns.x.addReply>[1];
    for (const published of [true, false]) {
      const { post, target } = await xPostWithComment(account, `crash test ${published}`);
      const text = `answer after a crash ${published}`;
      const key = `crash-${target.id}`;
      // What the stopped attempt left: its reservation, and (maybe) the reply on X.
      const limits = await loadLimits(h.db, h.api.userId);
      const attempt = replyAttemptId(h.api.userId, target.id, text, key);
      await h.db.transaction().execute((trx) => reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: attempt, kind: 'post' }], now: new Date() }));
      if (published) {
        h.standIns.x.addReply(target.platform_comment_id, me, text);
        await snapshot(h, post.id); // a refresh meanwhile stored it, as any own comment
      }
      const before = await usage();

      const res = await h.api.request('POST', replyPath(post.id, target.id), { body: { text }, headers: { 'Idempotency-Key': key } });
      assert.equal(res.status, 201, res.text);
      assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === text).length, 1, `published=${published}: one reply on X`);
      assert.equal(res.body.data.platform_comment_id, h.standIns.x.liveTweets().find((t) => t.text === text)!.id);
      assert.equal((await usage()).posts, before.posts, 'charged once: the stopped attempt\'s reservation is the one spent');
      if (published) assert.equal(res.body.data.id, (await comment(h, post.id, text)).id, 'the stored row keeps its id');
      assert.equal((await stored(target.id)).reply_comment_id, res.body.data.id);
      const states = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', attempt).execute();
      assert.deepEqual(states, [{ state: 'spent' }]);
    }
  });

  it('a reply whose process stopped mid-call is settled by the reconciler after 15 minutes: found on the platform it is recorded and charged once, not there it is refunded', async () => {
    const me = { id: x.platform_account_id, username: x.username } as Parameters<typeof h.standIns.x.addReply>[1];
    const rt = h.reconcilerRuntime();
    const reservation = (chargeId: string) => h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', chargeId).execute();
    // A reply made with a request now leaves its attempt's row; the reconciler removes it once settled.
    const made = await xPostWithComment(x, 'answered at once');
    assert.equal((await reply(made.post.id, made.target.id, { text: 'answered now' })).status, 201);
    const madeAttempt = await h.db.selectFrom('reply_attempts').select(['charge_id', 'text']).where('comment_id', '=', made.target.id).executeTakeFirstOrThrow();
    assert.deepEqual(await reservation(madeAttempt.charge_id), [{ state: 'spent' }]);

    for (const published of [true, false]) {
      const { post, target } = await xPostWithComment(x, `left reserved ${published}`);
      const text = `a reply left reserved ${published}`;
      // What the stopped attempt left (no Idempotency-Key, so no retry will ever come): its reservation and its
      // attempt's row, started 20 minutes ago; and (maybe) the reply on X.
      const limits = await loadLimits(h.db, h.api.userId);
      const chargeId = replyAttemptId(h.api.userId, target.id, text, undefined);
      const startedAt = new Date(Math.min(h.now().getTime(), Date.now()) - 20 * 60_000);
      await h.db.transaction().execute(async (trx) => {
        await trx.insertInto('reply_attempts').values({ charge_id: chargeId, user_id: h.api.userId, post_id: post.id, comment_id: target.id, text, started_at: startedAt }).execute();
        await reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: chargeId, kind: 'post' }], now: new Date() });
      });
      // One started a minute ago may still have its request running: left alone.
      const recent = await xPostWithComment(x, `still running ${published}`);
      const recentId = replyAttemptId(h.api.userId, recent.target.id, 'in flight', undefined);
      await h.db.transaction().execute(async (trx) => {
        const recentStart = new Date(Math.max(h.now().getTime(), Date.now()) - 60_000);
        await trx.insertInto('reply_attempts').values({ charge_id: recentId, user_id: h.api.userId, post_id: recent.post.id, comment_id: recent.target.id, text: 'in flight', started_at: recentStart }).execute();
        await reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: recentId, kind: 'post' }], now: new Date() });
      });
      if (published) h.standIns.x.addReply(target.platform_comment_id, me, text);
      const before = await usage();

      await reconcilePosts(rt);
      assert.deepEqual(await reservation(chargeId), [{ state: published ? 'spent' : 'refunded' }], `published=${published}`);
      assert.equal((await usage()).posts, before.posts - (published ? 0 : 1), published ? 'charged once, by the reservation held' : 'nothing charged');
      assert.deepEqual(await reservation(recentId), [{ state: 'reserved' }], 'a recent attempt is left to its request');
      const answered = await stored(target.id);
      assert.equal(answered.replied, published);
      if (published) assert.equal(answered.reply_comment_id, (await comment(h, post.id, text)).id);
      assert.equal(h.standIns.x.tweets().filter((t) => t.text === text).length, published ? 1 : 0, 'the reconciler never sends');
      await refundQuota(h.db, [recentId]);

      await reconcilePosts(rt);
      assert.deepEqual(await reservation(chargeId), [{ state: published ? 'spent' : 'refunded' }], 'settled once');
      const rows = await h.db.selectFrom('reply_attempts').select('charge_id').where('charge_id', 'in', [chargeId, recentId, madeAttempt.charge_id]).execute();
      assert.deepEqual(rows, [], 'settled attempts are removed');
    }
  });

  it('a reply left reserved that cannot be looked for (the platform failing) waits for the next look (after its backoff), and after a day is refunded unlooked', async () => {
    const limits = await loadLimits(h.db, h.api.userId);
    const leave = async (label: string, agoMs: number) => {
      const { post, target } = await xPostWithComment(x, `unlookable ${label}`);
      const chargeId = replyAttemptId(h.api.userId, target.id, `unlookable reply ${label}`, undefined);
      await h.db.transaction().execute(async (trx) => {
        const startedAt = new Date(Date.now() - agoMs);
        await trx.insertInto('reply_attempts').values({ charge_id: chargeId, user_id: h.api.userId, post_id: post.id, comment_id: target.id, text: `unlookable reply ${label}`, started_at: startedAt }).execute();
        await reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: chargeId, kind: 'post' }], now: new Date() });
      });
      return chargeId;
    };
    const recent = await leave('20 minutes', 20 * 60_000);
    const old = await leave('25 hours', 25 * 3_600_000);
    h.standIns.x.standIn.inject({ method: 'GET', path: '/2/tweets/search/recent' }, { kind: 'reply', response: { status: 503, json: { title: 'Service Unavailable', status: 503 } } }, 100);
    await reconcilePosts(h.reconcilerRuntime());
    const state = async (chargeId: string) => (await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', chargeId).executeTakeFirstOrThrow()).state;
    assert.equal(await state(recent), 'reserved', 'looked for again at the next look');
    assert.equal(await state(old), 'refunded', 'a day unlooked: nothing charged');
    h.standIns.x.standIn.clearFaults();
    await reconcilePosts(h.reconcilerRuntime());
    assert.equal(await state(recent), 'reserved', 'the next look waits out its backoff (2 minutes after the first)');
    await h.db.updateTable('reply_attempts').set({ next_look_at: sql`now() - interval '1 second'` }).where('charge_id', '=', recent).execute();
    await reconcilePosts(h.reconcilerRuntime());
    assert.equal(await state(recent), 'refunded', 'the next look finds nothing there');
  });

  it('a keyed request whose process stopped mid-call, settled by the reconciler before the retry: the retry answers the recorded reply and sends nothing', async () => {
    const me = { id: x.platform_account_id, username: x.username } as Parameters<typeof h.standIns.x.addReply>[1];
    const { post, target } = await xPostWithComment(x, 'settled before the retry');
    const text = 'a reply settled before its retry';
    const key = `settled-${target.id}`;
    const limits = await loadLimits(h.db, h.api.userId);
    const chargeId = replyAttemptId(h.api.userId, target.id, text, key);
    const startedAt = new Date(Math.min(h.now().getTime(), Date.now()) - 20 * 60_000);
    await h.db.transaction().execute(async (trx) => {
      await trx.insertInto('reply_attempts').values({ charge_id: chargeId, user_id: h.api.userId, post_id: post.id, comment_id: target.id, text, started_at: startedAt }).execute();
      await reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: chargeId, kind: 'post' }], now: new Date() });
    });
    h.standIns.x.addReply(target.platform_comment_id, me, text);
    await reconcilePosts(h.reconcilerRuntime());
    const recorded = await stored(target.id);
    assert.ok(recorded.reply_comment_id, 'the reconciler recorded the reply');
    const before = await usage();

    const res = await h.api.request('POST', replyPath(post.id, target.id), { body: { text }, headers: { 'Idempotency-Key': key } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.id, recorded.reply_comment_id);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === text).length, 1, 'never sent a second time');
    assert.deepEqual(await usage(), before, 'charged once');
  });

  it('a keyed retry after an unconfirmed 502 looks first: the reply the lost call published is recorded once, never sent again', async () => {
    const { post, target } = await xPostWithComment(x, 'unconfirmed, then retried');
    const text = 'published, answer lost';
    const keyed = { body: { text }, headers: { 'Idempotency-Key': `unconfirmed-${target.id}` } };
    const before = await usage();
    // The create lands but its answer is lost, and the looks that follow (the adapter's at the account's posts, then
    // Herald's at the conversation) cannot read.
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reset', thenHandle: true });
    h.standIns.x.rateLimit(/^\/2\/users\/[^/]+\/tweets$/, Math.floor(Date.now() / 1000) + 60);
    h.standIns.x.rateLimit('/2/tweets/search/recent', Math.floor(Date.now() / 1000) + 60);
    const lost = await h.api.request('POST', replyPath(post.id, target.id), keyed);
    assert.deepEqual([lost.status, lost.body.error?.code], [502, 'upstream_error'], lost.text);
    assert.equal((await usage()).posts, before.posts, 'returned with the 502, which says nothing changed (Herald keeps looking)');
    const sends = h.standIns.x.standIn.calls('POST', '/2/tweets').length;

    const retry = await h.api.request('POST', replyPath(post.id, target.id), keyed);
    assert.equal(retry.status, 201, retry.text);
    assert.equal(h.standIns.x.standIn.calls('POST', '/2/tweets').length, sends, 'the retry sent nothing');
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === text).length, 1);
    assert.equal(retry.body.data.platform_comment_id, h.standIns.x.liveTweets().find((t) => t.text === text)!.id);
    assert.equal((await stored(target.id)).reply_comment_id, retry.body.data.id);
    assert.equal((await usage()).posts, before.posts + 1, 'charged once');
  });

  it('a keyed retry whose look for the earlier attempt\'s reply fails answers 502 and sends nothing', async () => {
    const me = { id: x.platform_account_id, username: x.username } as Parameters<typeof h.standIns.x.addReply>[1];
    const { post, target } = await xPostWithComment(x, 'look fails');
    const text = 'answer whose look fails';
    const key = `look-fails-${target.id}`;
    // What a stopped attempt left: its reservation, and the reply on X.
    const limits = await loadLimits(h.db, h.api.userId);
    const attempt = replyAttemptId(h.api.userId, target.id, text, key);
    await h.db.transaction().execute((trx) => reserveQuota(trx, { userId: h.api.userId, limits, charges: [{ postId: attempt, kind: 'post' }], now: new Date() }));
    h.standIns.x.addReply(target.platform_comment_id, me, text);
    const before = await usage();
    const sends = h.standIns.x.standIn.calls('POST', '/2/tweets').length;

    h.standIns.x.rateLimit('/2/tweets/search/recent', Math.floor(Date.now() / 1000) + 60);
    const res = await h.api.request('POST', replyPath(post.id, target.id), { body: { text }, headers: { 'Idempotency-Key': key } });
    assert.deepEqual([res.status, res.body.error?.code], [502, 'upstream_error'], res.text);
    assert.match(res.body.error.message, /Herald could not tell whether an earlier attempt with this Idempotency-Key published the reply on X, so nothing was sent; that attempt is charged only if its reply is found/);
    assert.ok(res.headers.get('retry-after'), 'the platform\'s wait is passed on');
    assert.equal(h.standIns.x.standIn.calls('POST', '/2/tweets').length, sends, 'nothing sent');
    assert.equal((await usage()).posts, before.posts - 1, 'the stopped attempt\'s reservation is returned with the 502, which says nothing changed');
    assert.ok((await h.db.selectFrom('reply_attempts').select('untold_at').where('charge_id', '=', attempt).executeTakeFirstOrThrow()).untold_at, 'still looked for by the reconciler');
    assert.equal((await stored(target.id)).replied, false);

    const retry = await h.api.request('POST', replyPath(post.id, target.id), { body: { text }, headers: { 'Idempotency-Key': key } });
    assert.equal(retry.status, 201, retry.text);
    assert.equal(h.standIns.x.standIn.calls('POST', '/2/tweets').length, sends, 'still nothing sent: the reply was found');
    assert.equal((await usage()).posts, before.posts, 'charged once');
  });

  it('a deleted post\'s comments: reply and hide are 501 comments_unsupported with the listing\'s reason, nothing sent or charged; Herald\'s own reply can still be deleted', async () => {
    const { post, target } = await xPostWithComment(x, 'answer me after the post is gone');
    const own = await reply(post.id, target.id, { text: 'answered before the deletion' });
    assert.equal(own.status, 201, own.text);
    const deleted = await h.api.request('DELETE', `/api/v1/posts/${post.id}`);
    assert.equal(deleted.status, 200, deleted.text);
    const before = await usage();
    const sends = h.standIns.x.standIn.calls('POST', '/2/tweets').length;

    const listing = await h.api.request('GET', `/api/v1/posts/${post.id}/comments`);
    const reason = 'This post was deleted; its comments are no longer refreshed. The comments shown were stored before.';
    assert.deepEqual([listing.body.meta.sync.status, listing.body.meta.sync.reason], ['unsupported', reason]);
    const message = `${reason} Replying to its comments and hiding them need a published post.`;
    const res = await reply(post.id, target.id, { text: 'too late now' });
    assert.deepEqual([res.status, res.body], [501, { error: { code: 'comments_unsupported', message } }]);
    const hidden = await h.api.request('POST', `${replyPath(post.id, target.id).replace(/\/reply$/, '')}/hide`, { body: { hidden: true } });
    assert.deepEqual([hidden.status, hidden.body], [501, { error: { code: 'comments_unsupported', message } }]);
    assert.equal(h.standIns.x.standIn.calls('POST', '/2/tweets').length, sends, 'nothing sent');
    assert.deepEqual(await usage(), before, 'nothing charged');

    const removed = await h.api.request('DELETE', replyPath(post.id, own.body.data.id).replace(/\/reply$/, ''));
    assert.deepEqual([removed.status, removed.body], [200, { data: { id: own.body.data.id, deleted: true } }], removed.text);
    assert.equal(h.standIns.x.liveTweets().some((t) => t.text === 'answered before the deletion'), false);
  });

  it('mastodon: the same reply twice within its idempotency hour is one status, stored and charged once', async () => {
    const masto = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, masto.id, 'mastodon post for repeats');
    h.standIns.mastodon.addReply(post.platform_post_id, h.standIns.mastodon.addAccount('repeat_fan'), 'say it twice');
    await snapshot(h, post.id);
    const target = await comment(h, post.id, 'say it twice');
    const before = await usage();
    const first = await reply(post.id, target.id, { text: 'said once' });
    const second = await reply(post.id, target.id, { text: 'said once' });
    assert.deepEqual([first.status, second.status], [201, 201]);
    assert.equal(second.body.data.id, first.body.data.id);
    assert.equal(h.standIns.mastodon.liveStatuses().filter((st) => st.text === 'said once').length, 1);
    assert.equal((await usage()).posts, before.posts + 1);
  });

  it('mastodon: a keyed reply deduplicated to an older reply of the comment (another reply made since) is not charged again', async () => {
    const masto = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await publish(h, masto.id, 'mastodon post for an older repeat');
    h.standIns.mastodon.addReply(post.platform_post_id, h.standIns.mastodon.addAccount('older_fan'), 'answer me twice over');
    await snapshot(h, post.id);
    const target = await comment(h, post.id, 'answer me twice over');
    const before = await usage();
    const first = await reply(post.id, target.id, { text: 'the first answer' });
    const other = await reply(post.id, target.id, { text: 'another answer' });
    assert.deepEqual([first.status, other.status], [201, 201]);
    // Within Mastodon's idempotency hour the same text to the same comment is the first answer's status again.
    const again = await h.api.request('POST', replyPath(post.id, target.id), { body: { text: 'the first answer' }, headers: { 'Idempotency-Key': `older-${target.id}` } });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.body.data.id, first.body.data.id);
    assert.equal(h.standIns.mastodon.liveStatuses().filter((st) => st.text === 'the first answer').length, 1);
    assert.equal((await usage()).posts, before.posts + 2, 'two statuses published, two posts charged');
    const attempt = replyAttemptId(h.api.userId, target.id, 'the first answer', `older-${target.id}`);
    const states = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', attempt).execute();
    assert.deepEqual(states, [{ state: 'refunded' }]);
  });

  it('a deleted comment cannot be answered (404); the reply route replays with Idempotency-Key', async () => {
    const { post, target } = await xPostWithComment(x, 'will vanish');
    const keyed = { body: { text: 'once only' }, headers: { 'Idempotency-Key': `reply-${target.id}` } };
    const firstTry = await h.api.request('POST', replyPath(post.id, target.id), keyed);
    const replay = await h.api.request('POST', replyPath(post.id, target.id), keyed);
    assert.deepEqual([firstTry.status, replay.status, replay.headers.get('idempotent-replay')], [201, 201, 'true']);
    assert.deepEqual(replay.body, firstTry.body);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'once only').length, 1);

    await h.db.updateTable('comments').set({ deleted: true }).where('id', '=', target.id).execute();
    const res = await reply(post.id, target.id, { text: 'too late' });
    assert.deepEqual([res.status, res.body.error.code], [404, 'not_found']);
  });

  it('first comments are stored at once: first_comment.comment_id names an own comment of the post, usable with the comment routes', async () => {
    const post = await publish(h, x.id, 'post with a first comment', { first_comment: 'first!' });
    assert.equal(post.first_comment!.status, 'posted');
    const row = await stored(post.first_comment!.comment_id!);
    const postRow = await h.db.selectFrom('posts').select(['first_comment_platform_id']).where('id', '=', post.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      [row.post_id, row.own, row.text, row.platform_comment_id, row.platform_parent_id, row.author_handle],
      [post.id, true, 'first!', postRow.first_comment_platform_id, null, x.username],
    );
    const read = await h.api.request('GET', `/api/v1/posts/${post.id}`);
    assert.equal(read.body.data.first_comment.comment_id, row.id);
    const rows = await snapshot(h, post.id);
    assert.deepEqual(rows.map((r) => r.id), [row.id], 'a refresh finds it already stored');
  });
});
