import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { loadPlatformContext } from '../../src/accounts/platform-context';
import { disownHolds } from '../../src/posts/repository';
import { startThreadWorkflow, threadWorkflowId } from '../../src/threads/workflow-client';
import { insertXAccount, testSealedBox } from '../posts/fixtures';
import { harnessActivities, startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * A thread's workflow terminated (or lost) after its hold claimed the thread and sent part 1, while part 2's send is
 * still on its way: the rows are `publishing`, part 2's mark open, and the reconciler starts the workflow again
 * (`disownHolds`, then the start, as `reconcilePosts` does). The new run's claim took the thread at once, part 2's
 * look found nothing yet, and part 2 went out a second time. Now the claim waits until the old call can no longer be
 * in flight (`CALL_IN_FLIGHT_MS` after the latest open mark, by the workflow's clock), as a post's does.
 */
describe('Threads: a run started again while the old run\'s part call may still be in flight', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());

  const realSleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const creates = () => h.standIns.x.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets');

  it('waits for the old call before it looks: the part that landed meanwhile is found and recorded, not sent twice', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const { ctx } = await loadPlatformContext(h.db, testSealedBox, account.id);
    const texts = ['taken over thread, part one', 'taken over thread, part two, its send still out'];
    const threadId = randomUUID();
    // As the old run's hold left it: claimed at its time, part 1 sent and stored, part 2's call marked just now.
    const [one, two] = await h.db
      .insertInto('posts')
      .values(texts.map((text, i) => ({ user_id: h.api.userId, account_id: account.id, platform: 'x' as const, text, status: 'publishing' as const, scheduled_at: new Date(Date.now() - 1_000), thread_id: threadId, thread_order: i + 1 })))
      .returning('id')
      .execute();
    const root = await h.standIns.adapters.x.publish(ctx, { postId: one!.id, text: texts[0]!, media: [] });
    await h.db.updateTable('posts').set({ platform_post_id: root.platformPostId }).where('id', '=', one!.id).execute();
    await sql`update posts set publish_attempt_started_at = now() where id = ${two!.id}`.execute(h.db);
    const before = creates().length;

    const rt = h.reconcilerRuntime();
    await disownHolds(h.db, { postIds: [], threadIds: [threadId] });
    await startThreadWorkflow(rt, threadId);
    await realSleep(3_000);
    assert.equal(creates().length, before, 'the new run sent nothing while the old call may be in flight');
    const statuses = await h.db.selectFrom('posts').select('status').where('thread_id', '=', threadId).execute();
    assert.deepEqual(statuses.map((row) => row.status), ['publishing', 'publishing']);

    // The old call lands (its answer, and its run's store, lost with the run); the database's clock then passes the
    // call's room (time skipping moves only the workflow's).
    const landed = await h.standIns.adapters.x.publish(ctx, { postId: two!.id, text: texts[1]!, media: [], replyTo: { platformPostId: root.platformPostId, rootPlatformPostId: root.platformPostId } });
    await sql`update posts set publish_attempt_started_at = publish_attempt_started_at - interval '11 minutes' where id = ${two!.id}`.execute(h.db);

    assert.deepEqual(await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result(), { outcome: 'published', firstComment: null });
    const parts = await h.db.selectFrom('posts').select(['status', 'platform_post_id']).where('thread_id', '=', threadId).orderBy('thread_order').execute();
    assert.deepEqual(
      parts.map((p) => [p.status, p.platform_post_id]),
      [
        ['published', root.platformPostId],
        ['published', landed.platformPostId],
      ],
      'the part the old call made is the one recorded',
    );
    for (const text of texts) assert.equal(h.standIns.x.tweets().filter((t) => t.text === text).length, 1, `${text}: sent once`);
  });

  it('a lost hold\'s rows, read with the loss\'s time, say wait until the part\'s call cannot land; read by a signal\'s look, as stored', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const threadId = randomUUID();
    const [one] = await h.db
      .insertInto('posts')
      .values(['lost hold, one', 'lost hold, two'].map((text, i) => ({ user_id: h.api.userId, account_id: account.id, platform: 'x' as const, text, status: 'publishing' as const, scheduled_at: new Date(Date.now() - 1_000), thread_id: threadId, thread_order: i + 1 })))
      .returning('id')
      .execute();
    await h.db.updateTable('posts').set({ platform_post_id: '1001' }).where('id', '=', one!.id).execute();
    const marked = new Date(Date.now() - 60_000);
    await h.db.updateTable('posts').set({ publish_attempt_started_at: marked }).where('thread_id', '=', threadId).where('thread_order', '=', 2).execute();
    const activities = harnessActivities(h);
    const lands = marked.getTime() + 10 * 60_000;

    const lost = await activities.heldThreadState({ threadId, lostAt: Date.now() });
    assert.deepEqual(lost.claim, { kind: 'wait', until: lands, retry: { failures: 0, notBefore: lands } }, 'a lost hold\'s part is not looked for while its call may land');
    const looked = await activities.heldThreadState({ threadId });
    assert.deepEqual([looked.claim?.kind, looked.sent?.map((attempt) => attempt?.ok ?? null)], ['publish', [true, null]], 'a signal\'s look reads the parts as stored');
    const later = await activities.heldThreadState({ threadId, lostAt: lands + 1 });
    assert.deepEqual([later.claim?.kind, later.sent?.length], ['publish', 2], 'once the call cannot land, the parts as stored (the next call looks first)');
  });
});
