import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { commentsConfig, connectAccount } from './actions-fixtures';

/**
 * A thread's parts are posts of their own, and each lists the comments that answer it: not the thread's other parts,
 * not what answers them. On x every tweet of a thread carries the first tweet's conversation id, so a later part's
 * replies are found only through the first part's conversation; on bluesky a part's reply tree holds the next part.
 */
describe('comments of a thread part', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig() });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());

  const list = async (postId: string) => {
    await h.syncClock();
    const res = await h.api.request('GET', `/api/v1/posts/${postId}/comments?sync=true&include_deleted=true`);
    assert.equal(res.status, 200, res.text);
    return res.body.data as Array<{ text: string; own: boolean; deleted: boolean; platform_parent_id: string | null }>;
  };
  const texts = (comments: Array<{ text: string }>) => comments.map((c) => c.text).sort();
  const publishThread = async (body: Record<string, unknown>) => {
    const res = await h.api.request('POST', '/api/v1/threads', { body });
    assert.equal(res.status, 201, res.text);
    return res.body.data.posts as Array<{ id: string; platform_post_id: string; first_comment: { comment_id: string | null } | null }>;
  };

  it('x: each part lists the replies to it and under them, found through the first part\'s conversation; its first comment stays listed past the grace', async () => {
    const parts = await publishThread({ account_id: x.id, posts: [{ text: 'part one' }, { text: 'part two' }, { text: 'part three' }], first_comment: 'the first comment' });
    const [one, two, three] = parts;
    const fan = h.standIns.x.addUser({ username: 'threadfan' });
    h.standIns.x.addReply(one.platform_post_id, fan, 'answers one');
    const b = h.standIns.x.addReply(two.platform_post_id, fan, 'answers two');
    h.standIns.x.addReply(b.id, fan, 'answers the answer to two');
    h.standIns.x.addReply(three.platform_post_id, fan, 'answers three');

    assert.deepEqual(texts(await list(one.id)), ['answers one'], 'not the later parts, nor their replies');
    assert.deepEqual(texts(await list(two.id)), ['answers the answer to two', 'answers two']);
    // The first comment was stored on the last part when it was posted; a refresh past the grace that protects a
    // fresh own comment must still see it (it used to search the last part's own id, found nothing, and took it for deleted).
    await h.db.updateTable('comments').set({ first_seen_at: new Date(Date.now() - 3_600_000) }).where('id', '=', three.first_comment!.comment_id!).execute();
    const onThree = await list(three.id);
    assert.deepEqual(texts(onThree), ['answers three', 'the first comment']);
    assert.deepEqual(onThree.map((c) => c.deleted), [false, false]);
  });

  it('x: comments of another part stored on the first part before are taken out of its snapshot by a complete read', async () => {
    const [one, two] = await publishThread({ account_id: x.id, posts: [{ text: 'older one' }, { text: 'older two' }] });
    const fan = h.standIns.x.addUser({ username: 'olderfan' });
    const reply = h.standIns.x.addReply(two.platform_post_id, fan, 'stored on the wrong part');
    for (const [platformCommentId, parent, own, text] of [
      [two.platform_post_id, null, true, 'older two'],
      [reply.id, two.platform_post_id, false, 'stored on the wrong part'],
    ] as const) {
      await h.db
        .insertInto('comments')
        .values({
          post_id: one.id, platform: 'x', platform_comment_id: platformCommentId, platform_parent_id: parent, own,
          author_handle: 'a', author_display_name: 'A', author_platform_id: '1', author_avatar_url: null, text, created_at: new Date(),
        })
        .execute();
    }
    assert.deepEqual(texts(await list(one.id)), []);
    assert.deepEqual(texts(await list(two.id)), ['stored on the wrong part']);
  });

  it('x: a new reply to a comment older than recent search\'s 7 days is stored under the part that comment is stored on', async () => {
    const [one, two] = await publishThread({ account_id: x.id, posts: [{ text: 'aged one' }, { text: 'aged two' }] });
    const fan = h.standIns.x.addUser({ username: 'agedfan' });
    const old = h.standIns.x.addReply(two.platform_post_id, fan, 'said a week ago');
    assert.deepEqual(texts(await list(two.id)), ['said a week ago']);
    // Eight days pass, on x and in what Herald stored (so the complete read below does not take it for deleted).
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
    old.created_at = eightDaysAgo.toISOString();
    await h.db.updateTable('comments').set({ created_at: eightDaysAgo }).where('post_id', '=', two.id).where('platform_comment_id', '=', old.id).execute();
    const late = h.standIns.x.addReply(old.id, fan, 'answers the old comment');
    h.standIns.x.addReply(late.id, fan, 'answers that answer');

    await h.env.sleep('15 minutes');
    assert.deepEqual(texts(await list(two.id)), ['answers that answer', 'answers the old comment', 'said a week ago']);
    assert.deepEqual(texts(await list(one.id)), [], 'not the first part\'s');
  });

  it('x: a reply whose parent and grandparent the read does not hold, nor a lookup by id finds (deleted), is kept once, by the first part', async () => {
    const [one, two] = await publishThread({ account_id: x.id, posts: [{ text: 'lost one' }, { text: 'lost two' }] });
    const fan = h.standIns.x.addUser({ username: 'lostfan' });
    // Nobody listed the thread while these were within recent search's 7 days: none of them was stored.
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const grandparent = h.standIns.x.addReply(two.platform_post_id, fan, 'a week old, never stored');
    const parent = h.standIns.x.addReply(grandparent.id, fan, 'also a week old');
    grandparent.created_at = eightDaysAgo;
    parent.created_at = eightDaysAgo;
    const late = h.standIns.x.addReply(parent.id, fan, 'answers a chain x no longer lists');
    h.standIns.x.addReply(late.id, fan, 'and a reply under it');
    // Its author deleted the grandparent: nothing says which part the chain hangs from.
    grandparent.deleted = true;

    const onOne = await list(one.id);
    assert.deepEqual(texts(onOne), ['and a reply under it', 'answers a chain x no longer lists'], 'kept, not dropped from every part');
    assert.equal(onOne.find((c) => c.text === 'answers a chain x no longer lists')!.platform_parent_id, parent.id, 'its parent as x gave it');
    assert.deepEqual(texts(await list(two.id)), [], 'stored once');
    await h.env.sleep('15 minutes');
    assert.deepEqual(texts(await list(one.id)), ['and a reply under it', 'answers a chain x no longer lists'], 'and kept by the next read');
    assert.deepEqual((await list(one.id)).map((c) => c.deleted), [false, false]);
  });

  it('x: a reply to a comment past recent search\'s 7 days and never stored is placed by that comment\'s own parent: a later part\'s, not the first part\'s', async () => {
    const [one, two] = await publishThread({ account_id: x.id, posts: [{ text: 'placed one' }, { text: 'placed two' }] });
    const fan = h.standIns.x.addUser({ username: 'placedfan' });
    // Nobody listed the thread while it was within recent search's 7 days: never stored.
    const aged = h.standIns.x.addReply(two.platform_post_id, fan, 'a week old on part two, never stored');
    aged.created_at = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const late = h.standIns.x.addReply(aged.id, fan, 'answers the aged comment on part two');
    h.standIns.x.addReply(late.id, fan, 'and one under that');

    assert.deepEqual(texts(await list(one.id)), [], 'not the first part\'s: the aged parent answers part two');
    const onTwo = await list(two.id);
    assert.deepEqual(texts(onTwo), ['and one under that', 'answers the aged comment on part two']);
    assert.equal(onTwo.find((c) => c.text === 'answers the aged comment on part two')!.platform_parent_id, aged.id, 'its parent as x gave it');
  });

  it('x: a reply whose parent and grandparent the read does not hold is placed by looking its ancestors up by id: under the later part they answer, not the first part', async () => {
    const [one, two] = await publishThread({ account_id: x.id, posts: [{ text: 'deep one' }, { text: 'deep two' }] });
    const fan = h.standIns.x.addUser({ username: 'deepfan' });
    // Nobody listed the thread while these were within recent search's 7 days: none of them was stored. Three levels
    // are missing: the search includes the parent, one lookup by id the grandparent and (expanded) what it answers.
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const greatGrandparent = h.standIns.x.addReply(two.platform_post_id, fan, 'three levels up, on part two');
    const grandparent = h.standIns.x.addReply(greatGrandparent.id, fan, 'two levels up');
    const parent = h.standIns.x.addReply(grandparent.id, fan, 'one level up');
    for (const aged of [greatGrandparent, grandparent, parent]) aged.created_at = eightDaysAgo;
    const late = h.standIns.x.addReply(parent.id, fan, 'answers a chain three levels deep on part two');
    h.standIns.x.addReply(late.id, fan, 'and one under that, deep');
    const earlier = h.standIns.x.standIn.calls('GET', '/2/tweets').length;
    const lookups = () => h.standIns.x.standIn.calls('GET', '/2/tweets').slice(earlier);

    assert.deepEqual(texts(await list(one.id)), [], 'not the first part\'s: its ancestors answer part two');
    const onTwo = await list(two.id);
    assert.deepEqual(texts(onTwo), ['and one under that, deep', 'answers a chain three levels deep on part two']);
    assert.equal(onTwo.find((c) => c.text === 'answers a chain three levels deep on part two')!.platform_parent_id, parent.id, 'its parent as x gave it');
    // One lookup a part's read, for the ids where the chain stopped, asking what they answer too.
    assert.deepEqual(lookups().map((r) => r.query.ids), [grandparent.id, grandparent.id]);
    assert.equal(lookups()[0]!.query.expansions, 'referenced_tweets.id');

    // Once stored on part two, no read looks it up again (part two keeps what it stored; the first part leaves it to part two).
    await h.env.sleep('15 minutes');
    assert.deepEqual(texts(await list(two.id)), ['and one under that, deep', 'answers a chain three levels deep on part two']);
    assert.deepEqual(texts(await list(one.id)), []);
    assert.equal(lookups().length, 2);
  });

  it('bluesky: a part lists the replies under it, not the next part hanging in its reply tree nor what answers that part', async () => {
    const { bluesky } = h.standIns;
    const me = bluesky.addAccount({ handle: 'threads.bsky.test' });
    const account = await connectAccount(h, { platform: 'bluesky', handle: me.handle, app_password: me.appPassword, service_url: bluesky.origin });
    const [one, two] = await publishThread({ account_id: account.id, posts: [{ text: 'sky one' }, { text: 'sky two' }] });
    const fan = bluesky.addAccount({ handle: 'skyfan.bsky.test' });
    const toOne = bluesky.reply(one.platform_post_id, fan, 'answers sky one');
    bluesky.reply(toOne.uri, fan, 'answers that answer');
    bluesky.reply(two.platform_post_id, fan, 'answers sky two');

    assert.deepEqual(texts(await list(one.id)), ['answers sky one', 'answers that answer']);
    assert.deepEqual(texts(await list(two.id)), ['answers sky two']);
  });
});
