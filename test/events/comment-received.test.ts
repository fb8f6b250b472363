import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AccountRow } from '../../src/db/tables/accounts';
import type { EventRow } from '../../src/db/tables/events';
import type { XStandInUser } from '../standins/x';
import { usageMonth } from '../../src/quota/quota';
import { commentsConfig, publish, snapshot } from '../comments/actions-fixtures';
import { insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * `comment.received` (decisions.md "Events and webhooks"): written by the comment sync, through the real listing
 * route and sync workflow, once at the end of each sync with every comment stored and not reported yet.
 */
describe('Events: comment.received from the comment sync', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  let x: AccountRow;
  let fan: XStandInUser;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent', config: commentsConfig() });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    fan = h.standIns.x.addUser({ username: 'commenter' });
  });
  after(async () => h?.stop());

  const sync = async (postId: string) => {
    await h.syncClock();
    const res = await h.api.request('GET', `/api/v1/posts/${postId}/comments?sync=true`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.meta.sync.status, 'ok', res.text);
    return res.body.data as Array<{ id: string; text: string }>;
  };
  const receivedAbout = (postId: string, userId = h.api.userId): Promise<EventRow[]> =>
    h.db
      .selectFrom('events')
      .selectAll()
      .where('user_id', '=', userId)
      .where('type', '=', 'comment.received')
      .where(sql<boolean>`data->>'post_id' = ${postId}`)
      .orderBy('id')
      .execute();
  const textsOf = (event: EventRow) => (event.data as { comments: Array<{ text: string }> }).comments.map((c) => c.text).sort();
  const idsOf = (event: EventRow) => (event.data as { comments: Array<{ id: string }> }).comments.map((c) => c.id);
  const countOf = (event: EventRow) => {
    const { comment_count, truncated } = event.data as { comment_count: number; truncated: boolean };
    return { comment_count, truncated };
  };
  const searches = () => h.standIns.x.standIn.calls('GET', '/2/tweets/search/recent').length;
  /** The post's stored comments, not the account's own, in the listing's order (newest first). */
  const storedIds = async (postId: string) =>
    (
      await h.db.selectFrom('comments').select('id').where('post_id', '=', postId).where('own', '=', false).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
    ).map((r) => r.id);

  it('one event per sync with the new platform comments, as the listing shows them; never again for a comment a later sync sees', async () => {
    const post = await publish(h, x.id, 'comments welcome');
    h.standIns.x.addReply(post.platform_post_id, fan, 'first!');
    h.standIns.x.addReply(post.platform_post_id, fan, 'second');

    const listed = await sync(post.id);
    const [first] = await receivedAbout(post.id);
    assert.ok(first, 'a comment.received event');
    assert.deepEqual(textsOf(first), ['first!', 'second']);
    assert.deepEqual(countOf(first), { comment_count: 2, truncated: false });
    assert.equal(first.request, null, 'a sync is the service own work');
    const data = first.data as { post_id: string; comments: Array<{ id: string; text: string }> };
    assert.equal(data.post_id, post.id);
    for (const comment of data.comments) {
      assert.deepEqual(comment, listed.find((c) => c.id === comment.id), 'the comment object as the API shows it');
    }

    h.standIns.x.addReply(post.platform_post_id, fan, 'third');
    await h.env.sleep('15 minutes');
    await sync(post.id);
    await h.env.sleep('15 minutes');
    await sync(post.id);
    const events = await receivedAbout(post.id);
    assert.deepEqual(events.map(textsOf), [['first!', 'second'], ['third']], 'only the new comment, once, across refreshes');
  });

  it("none for Herald's own first comment and replies, stored as own before any sync sees them", async () => {
    const post = await publish(h, x.id, 'with a first comment', { first_comment: 'our own first comment' });
    assert.equal(post.first_comment?.status, 'posted');
    h.standIns.x.addReply(post.platform_post_id, fan, 'a question');
    const listed = await sync(post.id);
    const question = listed.find((c) => c.text === 'a question')!;
    const reply = await h.api.request('POST', `/api/v1/posts/${post.id}/comments/${question.id}/reply`, { body: { text: 'our answer' } });
    assert.equal(reply.status, 201, reply.text);

    await h.env.sleep('15 minutes');
    const relisted = await sync(post.id);
    assert.ok(relisted.some((c) => c.text === 'our answer') && relisted.some((c) => c.text === 'our own first comment'), 'the sync saw both');
    const events = await receivedAbout(post.id);
    assert.deepEqual(events.map(textsOf), [['a question']]);
  });

  it('one event for a sync that reads several pages of new comments, with the newest 100 of them, their count, and truncated', async () => {
    const post = await publish(h, x.id, 'a busy post');
    for (let i = 0; i < 150; i += 1) h.standIns.x.addReply(post.platform_post_id, fan, `reply ${i}`);
    const before = searches();
    await sync(post.id);
    assert.equal(searches() - before, 2, 'x pages replies 100 at a time: two pages');

    const events = await receivedAbout(post.id);
    assert.equal(events.length, 1);
    const ids = await storedIds(post.id);
    assert.equal(ids.length, 150);
    assert.deepEqual(idsOf(events[0]), ids.slice(0, 100));
    assert.deepEqual(countOf(events[0]), { comment_count: 150, truncated: true });
  });

  it('one event for a sync the x read allowance stops on its second page, with what it stored (the newest 100, and its count)', async () => {
    const user = await h.api.newUser('agent');
    const account = await insertXAccount(h.db, user.userId, h.standIns.x);
    const post = await publish(h, account.id, 'a busy post of a thrifty user', {}, user.apiKey);
    for (let i = 0; i < 160; i += 1) h.standIns.x.addReply(post.platform_post_id, fan, `reply ${i}`);
    await h.syncClock();
    // 150 of the Agent plan's 500 reads left: the first page's 100 and 50 of the second's 60.
    await h.db
      .insertInto('usage_months')
      .values({ user_id: user.userId, month: usageMonth(h.now()), x_comment_reads: 350 })
      .onConflict((oc) => oc.columns(['user_id', 'month']).doUpdateSet({ x_comment_reads: 350 }))
      .execute();

    const listed = await h.api.request('GET', `/api/v1/posts/${post.id}/comments?sync=true`, { key: user.apiKey });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.meta.sync.status, 'budget');
    const events = await receivedAbout(post.id, user.userId);
    assert.equal(events.length, 1);
    const ids = await storedIds(post.id);
    assert.equal(ids.length, 150);
    assert.deepEqual(idsOf(events[0]), ids.slice(0, 100));
    assert.deepEqual(countOf(events[0]), { comment_count: 150, truncated: true });
  });

  it('comments a refresh stored but did not report (it died before its end) are reported by the next sync, once', async () => {
    const post = await publish(h, x.id, 'an interrupted post');
    h.standIns.x.addReply(post.platform_post_id, fan, 'stored before the crash');
    h.standIns.x.addReply(post.platform_post_id, fan, 'also stored before the crash');
    // Stores the platform's pages as a refresh does, without the refresh's end.
    await snapshot(h, post.id);
    assert.deepEqual(await receivedAbout(post.id), []);

    h.standIns.x.addReply(post.platform_post_id, fan, 'new at the next sync');
    await sync(post.id);
    const events = await receivedAbout(post.id);
    assert.deepEqual(events.map(textsOf), [['also stored before the crash', 'new at the next sync', 'stored before the crash']]);

    await h.env.sleep('15 minutes');
    await sync(post.id);
    assert.equal((await receivedAbout(post.id)).length, 1, 'never reported twice');
  });

  it('none when a sync finds nothing new', async () => {
    const post = await publish(h, x.id, 'quiet post');
    await sync(post.id);
    assert.deepEqual(await receivedAbout(post.id), []);
  });
});
