import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { startApi } from '../helpers/api';
import { graphErrors } from '../standins/graph';
import { insertAccount, insertMastodonAccount, insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { comment, commentsConfig, connectAccount, insertPublishedPost, publish, snapshot } from './actions-fixtures';

describe('comment actions: hide and delete', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let x: AccountRow;
  let facebook: { id: string };
  let threads: { id: string };
  let instagram: { id: string };
  let linkedinPage: { id: string };

  before(async () => {
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig() });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const { page } = h.standIns.facebook;
    facebook = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    threads = await connectAccount(h, { platform: 'threads', access_token: h.standIns.threads.user.token });
    instagram = await connectAccount(h, { platform: 'instagram', access_token: h.standIns.instagram.user.igToken });
    const { member, organization } = h.standIns.linkedin;
    linkedinPage = await connectAccount(h, { platform: 'linkedin', access_token: member.token, organization_id: String(organization.id) });
  });
  after(async () => h?.stop());
  afterEach(() => {
    for (const s of [h.standIns.x, h.standIns.facebook, h.standIns.threads, h.standIns.instagram, h.standIns.linkedin]) s.standIn.clearFaults();
  });

  const path = (postId: string, commentId: string) => `/api/v1/posts/${postId}/comments/${commentId}`;
  const hide = (postId: string, commentId: string, hidden: boolean) => h.api.request('POST', `${path(postId, commentId)}/hide`, { body: { hidden } });
  const remove = (postId: string, commentId: string) => h.api.request('DELETE', path(postId, commentId));
  const stored = (id: string) => h.db.selectFrom('comments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('facebook: hides a comment on the platform, answers the whole comment, and shows it again', async () => {
    const post = await publish(h, facebook.id, 'fb hide target');
    const visitor = h.standIns.facebook.addExternalComment(post.platform_post_id, 'rude remark');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'rude remark');

    const hidden = await hide(post.id, c.id, true);
    assert.equal(hidden.status, 200, hidden.text);
    assert.deepEqual(
      { ...hidden.body.data, created_at: undefined },
      {
        id: c.id, post_id: post.id, platform: 'facebook', platform_comment_id: visitor.id, platform_parent_id: null,
        author: { handle: 'Ada Visitor', display_name: 'Ada Visitor', platform_id: visitor.from.id, avatar_url: hidden.body.data.author.avatar_url },
        text: 'rude remark', created_at: undefined, likes: 0, replies: 0, hidden: true, deleted: false, own: false, replied: false, replied_at: null, reply_comment_id: null,
      },
    );
    assert.equal(h.standIns.facebook.comments.get(visitor.id)!.is_hidden, true);
    assert.equal((await stored(c.id)).hidden, true);

    const again = await hide(post.id, c.id, true);
    assert.equal(again.status, 200);
    assert.equal(h.standIns.facebook.standIn.calls('POST', `/v25.0/${visitor.id}`).length, 1, 'asking for the state it has calls nothing');

    const shown = await hide(post.id, c.id, false);
    assert.equal(shown.body.data.hidden, false);
    assert.equal(h.standIns.facebook.comments.get(visitor.id)!.is_hidden, false);
  });

  it('facebook: deletes any comment, with its replies, and the comment a deleted reply answered is unanswered again; deleting again answers the same', async () => {
    const post = await publish(h, facebook.id, 'fb delete target');
    const top = h.standIns.facebook.addExternalComment(post.platform_post_id, 'top comment');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'top comment');
    const reply = await h.api.request('POST', `${path(post.id, c.id)}/reply`, { body: { text: 'thanks for writing' } });
    assert.equal(reply.status, 201, reply.text);
    h.standIns.facebook.addExternalComment(top.id, 'a visitor answers too');
    await snapshot(h, post.id);

    const deletedReply = await remove(post.id, reply.body.data.id);
    assert.deepEqual([deletedReply.status, deletedReply.body], [200, { data: { id: reply.body.data.id, deleted: true } }]);
    assert.deepEqual([(await stored(c.id)).replied, (await stored(c.id)).reply_comment_id], [false, null]);

    const res = await remove(post.id, c.id);
    assert.deepEqual([res.status, res.body], [200, { data: { id: c.id, deleted: true } }]);
    assert.equal(h.standIns.facebook.comments.has(top.id), false);
    const rows = await h.db.selectFrom('comments').select(['text', 'deleted']).where('post_id', '=', post.id).orderBy('text').execute();
    assert.deepEqual(rows, [
      { text: 'a visitor answers too', deleted: true },
      { text: 'thanks for writing', deleted: true },
      { text: 'top comment', deleted: true },
    ]);
    const deletes = h.standIns.facebook.standIn.calls('DELETE').length;
    const repeat = await remove(post.id, c.id);
    assert.deepEqual([repeat.status, repeat.body], [200, { data: { id: c.id, deleted: true } }]);
    assert.equal(h.standIns.facebook.standIn.calls('DELETE').length, deletes);
  });

  it('instagram: hides and deletes any comment', async () => {
    const ig = h.standIns.instagram;
    const mediaId = '17900000000000123';
    ig.media.set(mediaId, { id: mediaId, kind: 'feed', caption: 'ig', timestamp: new Date().toISOString(), shortcode: 'Cabc', permalink: 'https://www.instagram.com/p/Cabc/', containerId: 'c1', children: [] });
    const post = await insertPublishedPost(h.db, h.api.userId, { id: instagram.id, platform: 'instagram' }, mediaId, 'ig');
    const visitor = ig.addExternalComment(mediaId, 'nice pic');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'nice pic');
    const hidden = await hide(post.id, c.id, true);
    assert.deepEqual([hidden.status, hidden.body.data.hidden, ig.comments.get(visitor.id)!.hidden], [200, true, true]);
    const res = await remove(post.id, c.id);
    assert.deepEqual([res.status, res.body], [200, { data: { id: c.id, deleted: true } }]);
    assert.equal(ig.comments.has(visitor.id), false);
    const row = await stored(c.id);
    assert.deepEqual([row.deleted, row.hidden, row.text], [true, true, 'nice pic'], 'kept, text and all; hidden and deleted are independent');
  });

  it('threads: hides a top-level reply; deletes only its own replies (501 names what Threads allows), with the replies under them', async () => {
    const post = await publish(h, threads.id, 'threads target');
    const theirs = h.standIns.threads.addExternalReply(post.platform_post_id, 'their reply');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'their reply');
    const hidden = await hide(post.id, c.id, true);
    assert.deepEqual([hidden.status, hidden.body.data.hidden, h.standIns.threads.posts.get(theirs.id)!.hidden], [200, true, true]);
    const nested = h.standIns.threads.addExternalReply(theirs.id, 'a reply to their reply');
    await snapshot(h, post.id);
    const under = await comment(h, post.id, 'a reply to their reply');
    const notTopLevel = await hide(post.id, under.id, true);
    assert.deepEqual([notTopLevel.status, notTopLevel.body], [501, {
      error: { code: 'comment_action_unsupported', message: 'Threads lets only top-level replies be hidden; this comment answers another comment.' },
    }]);
    assert.deepEqual([h.standIns.threads.standIn.calls('POST', `/v1.0/${nested.id}/manage_reply`).length, (await stored(under.id)).hidden], [0, false]);

    const refused = await remove(post.id, c.id);
    assert.equal(refused.status, 501);
    assert.deepEqual(refused.body, {
      error: { code: 'comment_action_unsupported', message: "Threads does not allow deleting other people's comments; it allows replying, hiding and deleting your own replies." },
    });
    assert.equal(h.standIns.threads.standIn.calls('DELETE').length, 0);

    const own = await h.api.request('POST', `${path(post.id, c.id)}/reply`, { body: { text: 'our answer' } });
    assert.equal(own.status, 201, own.text);
    h.standIns.threads.addExternalReply(own.body.data.platform_comment_id, 'answer to our answer');
    await snapshot(h, post.id);
    const res = await remove(post.id, own.body.data.id);
    assert.deepEqual([res.status, res.body], [200, { data: { id: own.body.data.id, deleted: true } }]);
    assert.equal((await comment(h, post.id, 'answer to our answer')).deleted, true, 'replies go with it on threads');
    assert.equal((await stored(c.id)).replied, false);
  });

  it('threads: a reply to a later part of a thread is nested on Threads (the parts are a reply chain): hiding it is 501, nothing sent; a reply to the first part hides', async () => {
    const made = await h.api.request('POST', '/api/v1/threads', { body: { account_id: threads.id, posts: [{ text: 'threads part one' }, { text: 'threads part two' }] } });
    assert.equal(made.status, 201, made.text);
    const [one, two] = made.body.data.posts as Array<{ id: string; platform_post_id: string }>;
    const toTwo = h.standIns.threads.addExternalReply(two.platform_post_id, 'answers part two');
    const toOne = h.standIns.threads.addExternalReply(one.platform_post_id, 'answers part one');
    await snapshot(h, two.id);
    await snapshot(h, one.id);
    const underTwo = await comment(h, two.id, 'answers part two');
    const refused = await hide(two.id, underTwo.id, true);
    assert.deepEqual([refused.status, refused.body], [501, {
      error: { code: 'comment_action_unsupported', message: 'Threads lets only top-level replies be hidden; this comment answers a later part of a thread, which Threads files under the part before it.' },
    }]);
    assert.deepEqual([h.standIns.threads.standIn.calls('POST', `/v1.0/${toTwo.id}/manage_reply`).length, (await stored(underTwo.id)).hidden], [0, false]);

    const hidden = await hide(one.id, (await comment(h, one.id, 'answers part one')).id, true);
    assert.deepEqual([hidden.status, hidden.body.data?.hidden, h.standIns.threads.posts.get(toOne.id)!.hidden], [200, true, true], hidden.text);

    // The listing's capabilities are the post's (publishing-api.md): nothing under the later part can be hidden.
    const capabilitiesOf = async (postId: string) => (await h.api.request('GET', `/api/v1/posts/${postId}/comments?sync=false`)).body.meta.capabilities;
    assert.deepEqual(await capabilitiesOf(two.id), { reply: true, hide: false, delete_own: true, delete_any: false });
    assert.deepEqual(await capabilitiesOf(one.id), { reply: true, hide: true, delete_own: true, delete_any: false });
  });

  it('x: no hide (501 names what X allows); deletes its own replies only, and replies under them stay live', async () => {
    const post = await publish(h, x.id, 'x target', { first_comment: 'our first comment' });
    assert.ok(post.first_comment?.comment_id);
    const stranger = h.standIns.x.addUser({ username: 'stranger' });
    h.standIns.x.addReply(post.platform_post_id, stranger, 'stranger says hi');
    const ownComment = await comment(h, post.id, 'our first comment');
    h.standIns.x.addReply(ownComment.platform_comment_id, stranger, 'reply to the first comment');
    await snapshot(h, post.id);
    const theirs = await comment(h, post.id, 'stranger says hi');

    const noHide = await hide(post.id, theirs.id, true);
    assert.deepEqual([noHide.status, noHide.body.error.code, noHide.body.error.message], [501, 'comment_action_unsupported', 'X does not allow hiding comments; it allows replying and deleting your own replies.']);
    const noDelete = await remove(post.id, theirs.id);
    assert.deepEqual([noDelete.status, noDelete.body.error.code], [501, 'comment_action_unsupported']);

    const res = await remove(post.id, post.first_comment!.comment_id!);
    assert.deepEqual([res.status, res.body], [200, { data: { id: post.first_comment!.comment_id, deleted: true } }]);
    assert.equal(h.standIns.x.tweets().find((t) => t.id === ownComment.platform_comment_id)!.deleted, true);
    assert.equal((await comment(h, post.id, 'reply to the first comment')).deleted, false, 'replies stay live on x');
  });

  it('linkedin Page: deletes its own comments, not others\'', async () => {
    const post = await publish(h, linkedinPage.id, 'linkedin target');
    h.standIns.linkedin.addExternalComment(post.platform_post_id, 'visitor on linkedin');
    await snapshot(h, post.id);
    const theirs = await comment(h, post.id, 'visitor on linkedin');
    const own = await h.api.request('POST', `${path(post.id, theirs.id)}/reply`, { body: { text: 'page answers' } });
    assert.equal(own.status, 201, own.text);
    assert.equal((await remove(post.id, theirs.id)).status, 501);
    const res = await remove(post.id, own.body.data.id);
    assert.deepEqual([res.status, res.body], [200, { data: { id: own.body.data.id, deleted: true } }]);
    assert.equal([...h.standIns.linkedin.comments.values()].some((c) => c.text === 'page answers'), false);
  });

  it('bluesky and mastodon: no hide; delete their own replies only, and the replies under them stay live', async () => {
    const { bluesky, mastodon } = h.standIns;
    const me = bluesky.addAccount({ handle: 'moderator.bsky.test' });
    const bsky = await connectAccount(h, { platform: 'bluesky', handle: me.handle, app_password: me.appPassword, service_url: bluesky.origin });
    const masto = await insertMastodonAccount(h.db, h.api.userId, mastodon);
    const cases: Array<[string, string, (parent: string, text: string) => void, (platformId: string) => boolean]> = [
      ['bluesky', bsky.id, (parent, text) => bluesky.reply(parent, bluesky.addAccount({ handle: `fan${Math.floor(Math.random() * 1e6)}.bsky.test` }), text), (uri) => bluesky.record(uri) !== undefined],
      ['mastodon', masto.id, (parent, text) => mastodon.addReply(parent, mastodon.addAccount(`fan${Math.floor(Math.random() * 1e6)}`), text), (id) => mastodon.liveStatuses().some((s) => s.id === id)],
    ];
    for (const [platform, accountId, addReply, isLive] of cases) {
      const post = await publish(h, accountId, `${platform} moderation target`);
      addReply(post.platform_post_id, `${platform} stranger`);
      await snapshot(h, post.id);
      const theirs = await comment(h, post.id, `${platform} stranger`);
      const noHide = await hide(post.id, theirs.id, true);
      assert.deepEqual([noHide.status, noHide.body.error.code], [501, 'comment_action_unsupported'], platform);
      assert.equal((await remove(post.id, theirs.id)).status, 501, platform);
      const own = await h.api.request('POST', `${path(post.id, theirs.id)}/reply`, { body: { text: `${platform} answer` } });
      assert.equal(own.status, 201, own.text);
      addReply(own.body.data.platform_comment_id, `${platform} answer to the answer`);
      await snapshot(h, post.id);
      const res = await remove(post.id, own.body.data.id);
      assert.deepEqual([res.status, res.body], [200, { data: { id: own.body.data.id, deleted: true } }], platform);
      assert.equal(isLive(own.body.data.platform_comment_id), false, `${platform}: gone on the platform`);
      assert.equal((await comment(h, post.id, `${platform} answer to the answer`)).deleted, false, `${platform}: replies stay live`);
      assert.equal((await stored(theirs.id)).replied, false, `${platform}: unanswered again`);
    }
  });

  it('a platform refusal is 502 upstream_error with nothing changed; a comment the platform no longer has is 404 and recorded deleted', async () => {
    const post = await publish(h, facebook.id, 'fb refusal target');
    const visitor = h.standIns.facebook.addExternalComment(post.platform_post_id, 'flaky');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'flaky');
    h.standIns.facebook.standIn.inject({ method: 'DELETE' }, { kind: 'reply', response: { status: 500, json: { error: { message: 'An unexpected error has occurred.', code: 2, type: 'OAuthException' } } } });
    const res = await remove(post.id, c.id);
    assert.deepEqual(res.body, { error: { code: 'upstream_error', message: 'Facebook refused to delete the comment: Facebook had a temporary problem; nothing was changed.' } });
    assert.equal(res.status, 502);
    assert.deepEqual([(await stored(c.id)).deleted, h.standIns.facebook.comments.has(visitor.id)], [false, true]);

    h.standIns.facebook.comments.delete(visitor.id);
    const gone = await hide(post.id, c.id, true);
    assert.equal(gone.status, 404, gone.text);
    assert.equal(gone.body.error.code, 'not_found');
    assert.deepEqual([(await stored(c.id)).deleted, (await stored(c.id)).hidden], [true, false]);
  });

  it('graph\'s 100/33 to a hide or a reply on a comment it still has: 502, nothing changed, the comment not recorded deleted', async () => {
    const post = await publish(h, facebook.id, 'fb ambiguous 100/33');
    const visitor = h.standIns.facebook.addExternalComment(post.platform_post_id, 'still here');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'still here');
    // Missing permission or unsupported operation, in Graph's words for "does not exist" too.
    h.standIns.facebook.standIn.inject({ method: 'POST', path: `/v25.0/${visitor.id}` }, { kind: 'reply', response: graphErrors.unknownObject(visitor.id, 'post') });
    const hidden = await hide(post.id, c.id, true);
    assert.deepEqual([hidden.status, hidden.body], [502, { error: { code: 'upstream_error', message: 'Facebook refused to change the comment: Facebook did not allow this connection to change it; nothing was changed.' } }]);
    h.standIns.facebook.standIn.inject({ method: 'POST', path: `/v25.0/${visitor.id}/comments` }, { kind: 'reply', response: graphErrors.unknownObject(visitor.id, 'post') });
    const replied = await h.api.request('POST', `${path(post.id, c.id)}/reply`, { body: { text: 'not allowed' } });
    assert.deepEqual([replied.status, replied.body.error.code], [502, 'upstream_error'], replied.text);
    assert.match(replied.body.error.message, /did not allow this connection to reply to this comment; nothing was changed\.$/);
    const row = await stored(c.id);
    assert.deepEqual([row.deleted, row.hidden, row.replied, h.standIns.facebook.comments.get(visitor.id)!.is_hidden], [false, false, false, false]);
  });

  it('refused before any platform call: 404 for another user\'s post or comment, 501 for telegram, a linkedin profile and coming-soon comments', async () => {
    const post = await publish(h, facebook.id, 'fb ownership target');
    h.standIns.facebook.addExternalComment(post.platform_post_id, 'mine to moderate');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'mine to moderate');
    const other = await h.api.newUser('starter');
    const foreign = await h.api.request('POST', `${path(post.id, c.id)}/hide`, { key: other.apiKey, body: { hidden: true } });
    assert.deepEqual([foreign.status, foreign.body.error.code], [404, 'not_found']);
    const otherPost = await publish(h, facebook.id, 'fb another post');
    assert.deepEqual((await remove(otherPost.id, c.id)).status, 404, 'a comment of another post');
    assert.deepEqual((await remove(post.id, 'not-a-uuid')).status, 404);
    assert.equal((await hide(post.id, c.id, 'yes' as unknown as boolean)).status, 400);

    const telegram = await insertAccount(h.db, h.api.userId, { platform: 'telegram', platform_account_id: '-100123', username: '@chan', credentials: { bot_token: '1:a', chat_id: '@chan' } });
    const tgPost = await insertPublishedPost(h.db, h.api.userId, { id: telegram.id, platform: 'telegram' }, '7', 'tg');
    const tg = await remove(tgPost.id, c.id);
    assert.deepEqual([tg.status, tg.body.error.code], [501, 'comments_unsupported']);

    const profile = await connectAccount(h, { platform: 'linkedin', access_token: h.standIns.linkedin.member.token });
    const profilePost = await publish(h, profile.id, 'linkedin profile post');
    const li = await h.api.request('POST', `${path(profilePost.id, c.id)}/reply`, { body: { text: 'hi' } });
    assert.deepEqual([li.status, li.body.error.code], [501, 'comments_unsupported']);

    // Under the default HERALD_COMING_SOON flags (the same database: testDatabase() is shared per run).
    const defaults = await startApi({ deps: { adapters: h.standIns.adapters } });
    try {
      const user = { userId: defaults.userId };
      const fb = await insertAccount(h.db, user.userId, { platform: 'facebook', platform_account_id: 'p', username: 'p', kind: 'page', credentials: { page_id: '1', access_token: 't' } });
      const fbPost = await insertPublishedPost(h.db, user.userId, { id: fb.id, platform: 'facebook' }, '1_2', 'fb');
      const soon = await defaults.request('DELETE', path(fbPost.id, c.id));
      assert.deepEqual(soon.body, { error: { code: 'platform_coming_soon', message: 'Facebook comments are coming soon and not yet available.' } });
      assert.equal(soon.status, 501);
      const member = await insertAccount(h.db, user.userId, { platform: 'linkedin', platform_account_id: 'urn:li:person:m', username: 'm', kind: 'profile', credentials: { access_token: 't' } });
      const memberPost = await insertPublishedPost(h.db, user.userId, { id: member.id, platform: 'linkedin' }, 'urn:li:share:1', 'li');
      const never = await defaults.request('POST', `${path(memberPost.id, c.id)}/reply`, { body: { text: 'hi' } });
      assert.deepEqual([never.status, never.body.error.code], [501, 'comments_unsupported'], 'a LinkedIn profile reads no comments: not "coming soon"');
    } finally {
      await defaults.close();
    }
  });

  it('deleting a deleted comment again is the same 200 before any other check: a lost connection, a coming-soon flag; still 404 for another user', async () => {
    const storeDeleted = async (userId: string) => {
      const account = await insertAccount(h.db, userId, { platform: 'facebook', platform_account_id: 'page', username: 'page', kind: 'page', credentials: { page_id: '1', access_token: 't' } });
      const post = await insertPublishedPost(h.db, userId, { id: account.id, platform: 'facebook' }, '1_2', 'fb');
      const deleted = await h.db
        .insertInto('comments')
        .values({
          post_id: post.id, platform: 'facebook', platform_comment_id: '1_2_3', platform_parent_id: null, author_handle: 'fan',
          author_display_name: 'Fan', author_platform_id: '42', author_avatar_url: null, text: 'gone already', created_at: new Date(), deleted: true,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { account, post, comment: deleted };
    };
    const { account, post, comment: gone } = await storeDeleted(h.api.userId);
    const same = [200, { data: { id: gone.id, deleted: true } }];
    for (const inactive_reason of ['connection_lost', 'reauthorization_required'] as const) {
      await h.db.updateTable('accounts').set({ active: false, inactive_reason }).where('id', '=', account.id).execute();
      const again = await remove(post.id, gone.id);
      assert.deepEqual([again.status, again.body], same, inactive_reason);
    }
    assert.equal((await h.api.request('DELETE', `/api/v1/accounts/${account.id}`)).status, 200);
    const disconnected = await remove(post.id, gone.id);
    assert.deepEqual([disconnected.status, disconnected.body], same, 'disconnected');
    const other = await h.api.newUser('starter');
    const foreign = await h.api.request('DELETE', path(post.id, gone.id), { key: other.apiKey });
    assert.deepEqual([foreign.status, foreign.body.error.code], [404, 'not_found']);
    assert.equal((await remove(post.id, '00000000-0000-4000-8000-000000000000')).status, 404);

    // Under the default HERALD_COMING_SOON flags, where Facebook's comments are coming soon.
    const defaults = await startApi({ deps: { adapters: h.standIns.adapters } });
    try {
      const flagged = await storeDeleted(defaults.userId);
      const again = await defaults.request('DELETE', path(flagged.post.id, flagged.comment.id));
      assert.deepEqual([again.status, again.body], [200, { data: { id: flagged.comment.id, deleted: true } }]);
    } finally {
      await defaults.close();
    }
  });
});
