import assert from 'node:assert/strict';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { testDatabase } from '../helpers/db';
import { gatedDatabase } from '../helpers/gated-database';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * Two PATCHes of one scheduled post (or of two parts of one thread) at the same moment (README "Posts", edit-races):
 * each plans its change from its read of the row and writes the columns it plans, so the one that read first must not
 * write back, over the other's change, what it read. The read of the PATCH that loses is held back (it runs at once,
 * its answer is delivered when the test releases it) while the other PATCH is made and answered.
 */

/**
 * The edit's read of the post it changes (`findOwnPost`), as the pool sends it, with or without the row's version
 * (keyed by the post's id); and a draft thread's promotion's read of its parts (`loadOwnThreadParts`, keyed by the thread's).
 */
const isEditRead = (text: string | undefined) =>
  text !== undefined && (/^select \*.* from "posts" where "id" = \$1 and "user_id" = \$2$/.test(text) || /^select \*.* from "posts" where "thread_id" = \$1 and "user_id" = \$2 order by/.test(text));

describe('Posts: edits racing edits (a text edit and a reschedule)', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let gated: ReturnType<typeof gatedDatabase>;

  before(async function () {
    const shared = await testDatabase();
    gated = gatedDatabase(shared.url, { applicationName: 'herald-test-edit-races', isRead: isEditRead });
    h = await startPostsHarness({ plan: 'pro', database: { ...gated.handle, url: shared.url, name: shared.name } });
  });
  after(async () => {
    await h?.stop();
    await gated?.handle.close();
  });

  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tweetsOf = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text);
  const patch = (id: string, body: Record<string, unknown>) => h.api.request('PATCH', `/api/v1/posts/${id}`, { body });

  /**
   * `loser` is sent first and its read of `id` held (or of `heldKey`: a draft thread's parts); `winner` is made and
   * answered meanwhile; then the read is released and `loser` answered.
   */
  async function race(id: string, loser: Record<string, unknown>, winner: { id: string; body: Record<string, unknown> }, heldKey = id) {
    const read = gated.holdNextRead(heldKey);
    const first = patch(id, loser);
    await read.sent;
    const won = await patch(winner.id, winner.body);
    assert.equal(won.status, 200, won.text);
    read.release();
    const lost = await first;
    assert.equal(lost.status, 200, lost.text);
    return { won, lost };
  }

  async function scheduledPost(text: string, minutes: number): Promise<{ id: string; at: Date }> {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + minutes * 60_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    return { id: res.body.data.id, at };
  }

  it('a text edit that read the post before a reschedule keeps the new time: the post goes out once, at it, with the new text', async () => {
    const { id, at } = await scheduledPost('text edit racing a reschedule', 30);
    const later = new Date(at.getTime() + 60 * 60_000);
    const { lost } = await race(id, { text: 'text edit racing a reschedule, edited' }, { id, body: { schedule_at: later.toISOString() } });
    const edited = await row(id);
    assert.deepEqual([edited.text, edited.scheduled_at?.toISOString()], ['text edit racing a reschedule, edited', later.toISOString()], 'the reschedule was undone');
    assert.equal(edited.schedule_version, 1);
    assert.equal(lost.body.data.scheduled_at, later.toISOString(), 'the text edit answers the post as it now is');
    // Past the old time the post still waits; it goes out at the new one.
    await h.env.sleep(35 * 60_000);
    assert.equal((await row(id)).status, 'scheduled', 'published at the time the reschedule replaced');
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    assert.ok((await row(id)).published_at!.getTime() >= later.getTime(), 'not before the new time');
    assert.equal(tweetsOf('text edit racing a reschedule, edited').length, 1);
    assert.equal(tweetsOf('text edit racing a reschedule').length, 0);
  });

  it('a reschedule that read the post before a text edit keeps the new text', async () => {
    const { id, at } = await scheduledPost('reschedule racing a text edit', 30);
    const later = new Date(at.getTime() + 60 * 60_000);
    await race(id, { schedule_at: later.toISOString() }, { id, body: { text: 'reschedule racing a text edit, edited' } });
    const edited = await row(id);
    assert.deepEqual([edited.text, edited.scheduled_at?.toISOString()], ['reschedule racing a text edit, edited', later.toISOString()], 'the text edit was undone');
    assert.equal(edited.schedule_version, 1);
    await h.env.client.workflow.getHandle(postWorkflowId(id)).terminate('test done').catch(() => undefined);
  });

  it("a thread part's text edit that read it before the thread was rescheduled through another part: every part keeps the thread's new time, the thread goes out once", async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const texts = ['thread part edited while rescheduled', 'its second part, moved'];
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: texts.map((text) => ({ text })), schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const threadId: string = res.body.data.thread_id;
    const [first, second] = res.body.data.posts.map((p: { id: string }) => p.id) as [string, string];
    const later = new Date(at.getTime() + 60 * 60_000);
    await race(first, { text: 'thread part edited while rescheduled, edited' }, { id: second, body: { schedule_at: later.toISOString() } });
    const parts = await Promise.all([first, second].map(row));
    assert.deepEqual(
      parts.map((p) => [p.text, p.scheduled_at?.toISOString(), p.schedule_version]),
      [
        ['thread part edited while rescheduled, edited', later.toISOString(), 1],
        ['its second part, moved', later.toISOString(), 1],
      ],
      'the parts share one time',
    );
    assert.deepEqual(await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result(), { outcome: 'published', firstComment: null });
    for (const text of ['thread part edited while rescheduled, edited', 'its second part, moved']) assert.equal(tweetsOf(text).length, 1, text);
    assert.ok((await row(first)).published_at!.getTime() >= later.getTime(), 'not before the new time');
  });

  it("a draft's promotion that read it before a text edit carries the edit: the post it becomes has the new text", async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'draft promoted while edited', draft: true } });
    assert.equal(draft.status, 201, draft.text);
    const draftId: string = draft.body.data.id;
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const { lost } = await race(draftId, { schedule_at: at.toISOString() }, { id: draftId, body: { text: 'draft promoted while edited, edited' } });
    const promoted = await row(lost.body.data.id);
    assert.notEqual(promoted.id, draftId, 'a new post');
    assert.equal(promoted.promoted_from_draft_id, draftId);
    assert.deepEqual([promoted.status, promoted.text], ['scheduled', 'draft promoted while edited, edited'], 'the edit answered 200 is in the post the draft became');
    assert.equal((await row(draftId)).promoted_to_id, promoted.id);
    await h.env.client.workflow.getHandle(postWorkflowId(promoted.id)).terminate('test done').catch(() => undefined);
  });

  it("a draft thread's promotion that read its parts before one was edited carries the edit", async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const texts = ['draft thread promoted while edited', 'its second part, before the edit'];
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: texts.map((text) => ({ text })), draft: true } });
    assert.equal(res.status, 201, res.text);
    const threadId: string = res.body.data.thread_id;
    const [first, second] = res.body.data.posts.map((p: { id: string }) => p.id) as [string, string];
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const { lost } = await race(first, { schedule_at: at.toISOString() }, { id: second, body: { text: 'its second part, edited' } }, threadId);
    const promotedIds: string[] = lost.body.data.rescheduled_post_ids;
    const parts = await h.db.selectFrom('posts').selectAll().where('id', 'in', promotedIds).orderBy('thread_order').execute();
    assert.deepEqual(
      parts.map((p) => [p.status, p.text, p.promoted_from_draft_id]),
      [
        ['scheduled', 'draft thread promoted while edited', first],
        ['scheduled', 'its second part, edited', second],
      ],
      'the edit answered 200 is in the thread the drafts became',
    );
    await h.env.client.workflow.getHandle(threadWorkflowId(parts[0]!.thread_id!)).terminate('test done').catch(() => undefined);
  });
});
