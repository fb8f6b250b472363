import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AccountRow } from '../../src/db/tables/accounts';
import type { EventRow } from '../../src/db/tables/events';
import type { XStandInUser } from '../standins/x';
import { commentsConfig, publish } from '../comments/actions-fixtures';
import { insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * `comment.received` (decisions.md "Events and webhooks"): written by the comment sync, through the real listing
 * route and sync workflow, in the transaction that stores the comments the client has not seen.
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
  const receivedAbout = (postId: string): Promise<EventRow[]> =>
    h.db
      .selectFrom('events')
      .selectAll()
      .where('user_id', '=', h.api.userId)
      .where('type', '=', 'comment.received')
      .where(sql<boolean>`data->>'post_id' = ${postId}`)
      .orderBy('id')
      .execute();
  const textsOf = (event: EventRow) => (event.data as { comments: Array<{ text: string }> }).comments.map((c) => c.text).sort();

  it('one event per sync with the new platform comments, as the listing shows them; never again for a comment a later sync sees', async () => {
    const post = await publish(h, x.id, 'comments welcome');
    h.standIns.x.addReply(post.platform_post_id, fan, 'first!');
    h.standIns.x.addReply(post.platform_post_id, fan, 'second');

    const listed = await sync(post.id);
    const [first] = await receivedAbout(post.id);
    assert.ok(first, 'a comment.received event');
    assert.deepEqual(textsOf(first), ['first!', 'second']);
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

  it('none when a sync finds nothing new', async () => {
    const post = await publish(h, x.id, 'quiet post');
    await sync(post.id);
    assert.deepEqual(await receivedAbout(post.id), []);
  });
});
