import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AccountRow } from '../../src/db/tables/accounts';
import { startApi } from '../helpers/api';
import { insertAccount, insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { commentsConfig, connectAccount, insertPublishedPost, publish } from './actions-fixtures';

/**
 * `GET /api/v1/posts/:id/comments` over HTTP against the stand-ins: query validation, ownership, unsupported and
 * coming-soon platforms, capabilities per platform, filters, and cursor paging that lists every comment exactly once
 * while new ones arrive.
 */
describe('comment listing', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig() });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());

  const list = async (postId: string, query = '', key?: string) => {
    await h.syncClock();
    return h.api.request('GET', `/api/v1/posts/${postId}/comments${query}`, key ? { key } : {});
  };
  const texts = (res: { body: { data: Array<{ text: string }> } }) => res.body.data.map((c) => c.text);
  /** A stored comment as a refresh would leave it (the snapshot is what listings read). */
  const store = async (postId: string, text: string, at: Date, extra: Record<string, unknown> = {}) =>
    h.db
      .insertInto('comments')
      .values({
        post_id: postId, platform: 'x', platform_comment_id: `c-${randomUUID()}`, platform_parent_id: null,
        author_handle: 'fan', author_display_name: 'Fan', author_platform_id: '42', author_avatar_url: null,
        text, created_at: at, ...extra,
      })
      .returningAll()
      .executeTakeFirstOrThrow();

  it('refuses unrecognised query values with 400 bad_request naming the parameter', async () => {
    const post = await publish(h, x.id, 'validation target');
    const cases: Array<[string, RegExp]> = [
      ['?limit=0', /^limit: must be an integer between 1 and 100$/],
      ['?limit=101', /^limit: must be an integer between 1 and 100$/],
      ['?limit=ten', /^limit: /],
      ['?sync=maybe', /^sync: must be one of auto, true, false$/],
      ['?include_hidden=yes', /^include_hidden: must be true or false$/],
      ['?include_deleted=1', /^include_deleted: must be true or false$/],
      ['?since=yesterday', /^since: must be an ISO 8601 date or date-time between the years 0001 and 9999 \(UTC\)$/],
      ['?cursor=bm9wZQ', /^cursor: not a cursor from this listing/],
      ['?parent_id=', /^parent_id: must not be empty$/],
      ['?order=asc', /^Unknown query parameter: order$/],
      ['?limit=5&limit=6', /^limit: /],
    ];
    for (const [query, message] of cases) {
      const res = await list(post.id, query);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
      assert.match(res.body.error.message, message, query);
    }
  });

  it("answers 404 for another user's post and for an unknown id", async () => {
    const post = await publish(h, x.id, 'private post');
    const other = await h.api.newUser('starter');
    const foreign = await list(post.id, '', other.apiKey);
    assert.deepEqual([foreign.status, foreign.body.error.code], [404, 'not_found']);
    assert.equal((await list(randomUUID())).status, 404);
    assert.equal((await list('not-a-uuid')).status, 404);
  });

  it('pages newest first by cursor: every comment exactly once while new comments arrive between pages', async () => {
    const post = await publish(h, x.id, 'busy post');
    const base = Date.parse('2026-03-01T12:00:00Z');
    // 23 comments, three of them sharing one instant (the id breaks the tie).
    for (let i = 0; i < 20; i += 1) await store(post.id, `c${String(i).padStart(2, '0')}`, new Date(base + i * 1000));
    for (const t of ['tie-a', 'tie-b', 'tie-c']) await store(post.id, t, new Date(base + 10_500));

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(post.id, `?sync=false&limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.status, 200, res.text);
      seen.push(...texts(res));
      cursor = res.body.meta.next_cursor;
      pages += 1;
      // Someone comments between pages: newer than everything listed so far, so it belongs before the first page.
      await store(post.id, `new-${pages}`, new Date(Date.now() + pages * 1000));
    } while (cursor);
    const stored = [...Array(20).keys()].map((i) => `c${String(i).padStart(2, '0')}`).concat(['tie-a', 'tie-b', 'tie-c']);
    assert.deepEqual([...seen].sort(), stored.sort(), 'each stored comment once, none of the later arrivals');
    assert.equal(new Set(seen).size, seen.length);
    assert.equal(pages, 5);
    assert.deepEqual(seen.slice(0, 9), ['c19', 'c18', 'c17', 'c16', 'c15', 'c14', 'c13', 'c12', 'c11']);

    const first = await list(post.id, '?sync=false&limit=100');
    assert.equal(first.body.meta.next_cursor, null, 'the last page has no cursor');
    assert.equal(first.body.data.length, 28);
    const other = await publish(h, x.id, 'another post');
    const page = await list(post.id, '?sync=false&limit=2');
    const crossed = await list(other.id, `?sync=false&cursor=${page.body.meta.next_cursor}`);
    assert.deepEqual([crossed.status, crossed.body.error.message], [400, 'cursor: belongs to the comments of another post']);
  });

  it('a tampered cursor is 400 bad_request, never 500: only the time the listing writes into one is read', async () => {
    const post = await publish(h, x.id, 'tampered cursors');
    await store(post.id, 'older', new Date('2026-03-01T12:00:00Z'));
    await store(post.id, 'newer', new Date('2026-03-01T12:00:10Z'));
    const cursorAt = (t: string) => Buffer.from(JSON.stringify({ p: post.id, t, i: randomUUID() })).toString('base64url');
    // Each is a time Date.parse takes; none is how the listing writes one, or PostgreSQL would refuse it.
    for (const t of ['1', 'March 7', '+275760-09-13T00:00:00.000Z', '0000-06-01T00:00:00.000Z', '2026-03-01T12:00:05Z', '2026-02-30T00:00:00.000Z']) {
      const res = await list(post.id, `?sync=false&cursor=${cursorAt(t)}`);
      assert.deepEqual([res.status, res.body.error?.code], [400, 'bad_request'], `${t}: ${res.text}`);
    }
    const written = await list(post.id, `?sync=false&cursor=${cursorAt('2026-03-01T12:00:05.000Z')}`);
    assert.deepEqual([written.status, texts(written)], [200, ['older']]);
  });

  it('filters: hidden and deleted only when asked, replies of one comment by parent_id, since, default page of 25', async () => {
    const post = await publish(h, x.id, 'filtered post');
    const t0 = Date.parse('2026-04-01T00:00:00Z');
    const parent = await store(post.id, 'parent', new Date(t0));
    await store(post.id, 'child', new Date(t0 + 1000), { platform_parent_id: parent.platform_comment_id });
    await store(post.id, 'hidden one', new Date(t0 + 2000), { hidden: true });
    await store(post.id, 'deleted one', new Date(t0 + 3000), { deleted: true });
    await store(post.id, 'both', new Date(t0 + 4000), { deleted: true, hidden: true });
    assert.deepEqual(texts(await list(post.id, '?sync=false')), ['child', 'parent']);
    assert.deepEqual(texts(await list(post.id, '?sync=false&include_hidden=true')), ['hidden one', 'child', 'parent']);
    const withDeleted = await list(post.id, '?sync=false&include_deleted=true');
    assert.deepEqual(texts(withDeleted), ['deleted one', 'child', 'parent']);
    assert.equal(withDeleted.body.data[0].deleted, true);
    assert.deepEqual(texts(await list(post.id, '?sync=false&include_deleted=true&include_hidden=false')), ['deleted one', 'child', 'parent']);
    assert.deepEqual(texts(await list(post.id, '?sync=false&include_deleted=true&include_hidden=true')), ['both', 'deleted one', 'hidden one', 'child', 'parent']);
    assert.deepEqual(texts(await list(post.id, `?sync=false&parent_id=${parent.platform_comment_id}`)), ['child']);
    assert.deepEqual(texts(await list(post.id, `?sync=false&since=${new Date(t0).toISOString()}`)), ['child']);
    assert.deepEqual(texts(await list(post.id, '?sync=false&since=2026-04-01T02:00:00%2B02:00')), ['child'], 'an offset is honoured');

    for (let i = 0; i < 30; i += 1) await store(post.id, `bulk ${i}`, new Date(t0 + 10_000 + i));
    const page = await list(post.id, '?sync=false');
    assert.equal(page.body.data.length, 25);
    assert.ok(page.body.meta.next_cursor);
  });

  it('answers the comment shape and meta of the spec; sync=false reads nothing', async () => {
    const post = await publish(h, x.id, 'shape post');
    const fan = h.standIns.x.addUser({ username: 'shapefan' });
    h.standIns.x.addReply(post.platform_post_id, fan, 'hello there');
    const calls = h.standIns.x.standIn.calls('GET', '/2/tweets/search/recent').length;
    const untouched = await list(post.id, '?sync=false');
    assert.deepEqual(untouched.body.data, []);
    assert.equal(untouched.body.meta.sync.status, 'ok');
    const { published_at } = (await h.api.request('GET', `/api/v1/posts/${post.id}`)).body.data;
    assert.equal(untouched.body.meta.sync.synced_at, published_at, 'before the first sync, the snapshot is as of the publish (a timestamp, never null)');
    assert.equal(h.standIns.x.standIn.calls('GET', '/2/tweets/search/recent').length, calls);

    const res = await list(post.id, '?sync=true');
    assert.equal(res.status, 200, res.text);
    const [c] = res.body.data;
    assert.deepEqual(Object.keys(c).sort(), ['author', 'created_at', 'deleted', 'hidden', 'id', 'likes', 'own', 'platform', 'platform_comment_id', 'platform_parent_id', 'post_id', 'replied', 'replied_at', 'replies', 'reply_comment_id', 'text'].sort());
    assert.deepEqual({ ...c, id: undefined, platform_comment_id: undefined, created_at: undefined }, {
      id: undefined, post_id: post.id, platform: 'x', platform_comment_id: undefined, platform_parent_id: null,
      author: { handle: 'shapefan', display_name: 'Shapefan', platform_id: fan.id, avatar_url: c.author.avatar_url },
      text: 'hello there', created_at: undefined, likes: 0, replies: 0, hidden: false, deleted: false, own: false, replied: false, replied_at: null, reply_comment_id: null,
    });
    assert.deepEqual(Object.keys(res.body.meta).sort(), ['capabilities', 'next_cursor', 'sync']);
    assert.deepEqual(res.body.meta.capabilities, { reply: true, hide: false, delete_own: true, delete_any: false });
    assert.deepEqual(Object.keys(res.body.meta.sync).sort(), ['next_sync_after', 'reason', 'status', 'synced_at']);
  });

  it('per platform: facebook (deleting a comment takes its replies), threads and a linkedin Page read through their stand-ins with their capabilities', async () => {
    const { page } = h.standIns.facebook;
    const facebook = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    const fbPost = await publish(h, facebook.id, 'fb listing');
    const top = h.standIns.facebook.addExternalComment(fbPost.platform_post_id, 'fb top');
    h.standIns.facebook.addExternalComment(top.id, 'fb reply');
    const fb = await list(fbPost.id, '?sync=true');
    assert.equal(fb.status, 200, fb.text);
    assert.deepEqual(texts(fb).sort(), ['fb reply', 'fb top']);
    assert.deepEqual(fb.body.meta.capabilities, { reply: true, hide: true, delete_own: true, delete_any: true });
    h.standIns.facebook.comments.delete(top.id);
    await h.env.sleep('61 seconds');
    const afterDelete = await list(fbPost.id, '?sync=true&include_deleted=true');
    assert.deepEqual(afterDelete.body.data.map((c: { text: string; deleted: boolean }) => [c.text, c.deleted]).sort(), [['fb reply', true], ['fb top', true]]);

    const threads = await connectAccount(h, { platform: 'threads', access_token: h.standIns.threads.user.token });
    const thPost = await publish(h, threads.id, 'threads listing');
    h.standIns.threads.addExternalReply(thPost.platform_post_id, 'threads reply');
    const th = await list(thPost.id, '?sync=true');
    assert.equal(th.status, 200, th.text);
    assert.deepEqual(texts(th), ['threads reply']);
    assert.deepEqual(th.body.meta.capabilities, { reply: true, hide: true, delete_own: true, delete_any: false });

    const { member, organization } = h.standIns.linkedin;
    const linkedin = await connectAccount(h, { platform: 'linkedin', access_token: member.token, organization_id: String(organization.id) });
    const liPost = await publish(h, linkedin.id, 'linkedin page listing');
    h.standIns.linkedin.addExternalComment(liPost.platform_post_id, 'linkedin comment');
    const li = await list(liPost.id, '?sync=true');
    assert.equal(li.status, 200, li.text);
    assert.deepEqual(texts(li), ['linkedin comment']);
    assert.deepEqual(li.body.meta.capabilities, { reply: true, hide: false, delete_own: true, delete_any: false });
  });

  it('per platform: bluesky and instagram read through their stand-ins with their capabilities and authors', async () => {
    const { bluesky, instagram } = h.standIns;
    const me = bluesky.addAccount({ handle: 'lister.bsky.test' });
    const bsky = await connectAccount(h, { platform: 'bluesky', handle: me.handle, app_password: me.appPassword, service_url: bluesky.origin });
    const bsPost = await publish(h, bsky.id, 'bluesky listing');
    bluesky.reply(bsPost.platform_post_id, bluesky.addAccount({ handle: 'listfan.bsky.test' }), 'bluesky reply');
    const bs = await list(bsPost.id, '?sync=true');
    assert.equal(bs.status, 200, bs.text);
    assert.deepEqual(bs.body.data.map((c: { text: string; own: boolean; author: { handle: string } }) => [c.text, c.own, c.author.handle]), [['bluesky reply', false, 'listfan.bsky.test']]);
    assert.deepEqual(bs.body.meta.capabilities, { reply: true, hide: false, delete_own: true, delete_any: false });

    const ig = await connectAccount(h, { platform: 'instagram', access_token: instagram.user.igToken });
    const mediaId = '17900000000000777';
    instagram.media.set(mediaId, { id: mediaId, kind: 'feed', caption: 'ig', timestamp: new Date().toISOString(), shortcode: 'Clist', containerId: 'c7', children: [] });
    const igPost = await insertPublishedPost(h.db, h.api.userId, { id: ig.id, platform: 'instagram' }, mediaId, 'ig');
    instagram.addExternalComment(mediaId, 'instagram comment');
    const igList = await list(igPost.id, '?sync=true');
    assert.equal(igList.status, 200, igList.text);
    assert.deepEqual(texts(igList), ['instagram comment']);
    assert.deepEqual(igList.body.meta.capabilities, { reply: true, hide: true, delete_own: true, delete_any: true });
  });

  it('501 comments_unsupported for telegram and a linkedin profile; 501 platform_coming_soon under the default flags', async () => {
    const telegram = await insertAccount(h.db, h.api.userId, { platform: 'telegram', platform_account_id: '-100999', username: '@chan', credentials: { bot_token: '1:a', chat_id: '@chan' } });
    const tgPost = await insertPublishedPost(h.db, h.api.userId, { id: telegram.id, platform: 'telegram' }, '7', 'tg');
    const tg = await list(tgPost.id);
    assert.deepEqual([tg.status, tg.body.error.code], [501, 'comments_unsupported']);
    const profile = await connectAccount(h, { platform: 'linkedin', access_token: h.standIns.linkedin.member.token });
    const profilePost = await publish(h, profile.id, 'linkedin profile post');
    const li = await list(profilePost.id);
    assert.deepEqual([li.status, li.body.error.code, li.body.error.message], [501, 'comments_unsupported', 'LinkedIn profiles expose no comments Herald can read.']);

    const defaults = await startApi({ deps: { adapters: h.standIns.adapters } });
    try {
      const fb = await insertAccount(h.db, defaults.userId, { platform: 'facebook', platform_account_id: 'p', username: 'p', kind: 'page', credentials: { page_id: '1', access_token: 't' } });
      const fbPost = await insertPublishedPost(h.db, defaults.userId, { id: fb.id, platform: 'facebook' }, '1_2', 'fb');
      const soon = await defaults.request('GET', `/api/v1/posts/${fbPost.id}/comments`);
      assert.deepEqual([soon.status, soon.body], [501, { error: { code: 'platform_coming_soon', message: 'Facebook comments are coming soon and not yet available.' } }]);
      // A LinkedIn profile reads no comments at all: not "coming soon" under the `linkedin:comments` flag.
      const member = await insertAccount(h.db, defaults.userId, { platform: 'linkedin', platform_account_id: 'urn:li:person:m', username: 'm', kind: 'profile', credentials: { access_token: 't' } });
      const memberPost = await insertPublishedPost(h.db, defaults.userId, { id: member.id, platform: 'linkedin' }, 'urn:li:share:1', 'li');
      const never = await defaults.request('GET', `/api/v1/posts/${memberPost.id}/comments`);
      assert.deepEqual([never.status, never.body.error.code], [501, 'comments_unsupported']);
    } finally {
      await defaults.close();
    }
  });

  it('409 comment_permission_required on sync=true with nothing stored when the connection needs re-authorizing; 200 with status permission once something is stored', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const post = await publish(h, account.id, 'reauth post');
    await h.db.updateTable('accounts').set({ inactive_reason: 'reauthorization_required' }).where('id', '=', account.id).execute();
    const refused = await list(post.id, '?sync=true');
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'comment_permission_required']);
    assert.match(refused.body.error.message, /needs re-authorizing.*Posting keeps working/);

    // A credential the platform refuses outright: posting stops too, and the sentence does not say otherwise.
    const lost = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const lostPost = await publish(h, lost.id, 'lost connection post');
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'connection_lost' }).where('id', '=', lost.id).execute();
    const lostRefused = await list(lostPost.id, '?sync=true');
    assert.deepEqual([lostRefused.status, lostRefused.body.error.code], [409, 'comment_permission_required']);
    assert.match(lostRefused.body.error.message, /no longer accepts this account's connection/);
    assert.doesNotMatch(lostRefused.body.error.message, /Posting keeps working/);

    await store(post.id, 'stored earlier', new Date('2026-01-01T00:00:00Z'));
    const snapshot = await list(post.id, '?sync=true');
    assert.equal(snapshot.status, 200);
    assert.equal(snapshot.body.meta.sync.status, 'permission');
    assert.deepEqual(texts(snapshot), ['stored earlier']);
  });

  it('a post that is not published reports sync status unsupported with a reason and lists nothing', async () => {
    await h.syncClock();
    const scheduled = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'later', schedule_at: new Date(h.now().getTime() + 3_600_000).toISOString() } });
    const res = await list(scheduled.body.data.id, '?sync=true');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, []);
    assert.deepEqual([res.body.meta.sync.status, res.body.meta.sync.reason], ['unsupported', 'This post is not published yet; its comments are read once it is.']);
  });
});
