import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { platformCallInfo } from '../helpers/temporal';
import { createActivities } from '../../activities';
import type { ThreadStep } from '../../activities/thread-parts';
import { createLogger } from '../../src/logger';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { testConfig } from '../helpers/api';
import { countingDatabase } from '../helpers/counting-database';
import { testDatabase } from '../helpers/db';
import { insertXAccount, testSealedBox } from '../posts/fixtures';
import { activitiesOf, endWaitingWorkflow, startPostsHarness, type PostsHarness } from '../posts/harness';

/** A lead long enough to act during the hold, short enough to wait for in real time (a running activity stops skipping). */
const LEAD_MS = 3_000;

describe('Scheduled threads: prepared a lead ahead, held in the worker, sent from the instant', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async function () {
    h = await startPostsHarness({ plan: 'pro', posts: { dueLeadMs: LEAD_MS } });
  });
  after(async () => h?.stop());

  const rows = (threadId: string) => h.db.selectFrom('posts').selectAll().where('thread_id', '=', threadId).orderBy('thread_order').execute();
  const tweetsOf = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text);
  const settle = async (threadId: string) => {
    const result = await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result();
    await h.syncClock();
    return result;
  };

  async function scheduledThread(texts: string[], minutes: number): Promise<{ threadId: string; ids: string[]; at: Date }> {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + minutes * 60_000);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: texts.map((text) => ({ text })), schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    return { threadId: res.body.data.thread_id, ids: res.body.data.posts.map((p: { id: string }) => p.id), at };
  }

  /** A thread of its own account, 30 minutes ahead, its workflow now holding it (a second and a half before the instant). */
  async function heldThread(texts: string[]) {
    const thread = await scheduledThread(texts, 30);
    await h.env.sleep(30 * 60_000 - LEAD_MS / 2);
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(thread.threadId)), ['publishThreadWhenDue']);
    assert.deepEqual((await rows(thread.threadId)).map((r) => r.status), texts.map(() => 'scheduled'));
    return thread;
  }

  it('waits unread for its time, is held, and the hold sends every part from the instant, each replying to the previous', async () => {
    const { threadId, at } = await heldThread(['held one', 'held two', 'held three']);
    assert.deepEqual(await settle(threadId), { outcome: 'published', firstComment: null });
    const [one, two, three] = ['held one', 'held two', 'held three'].map((text) => tweetsOf(text));
    assert.deepEqual([one!.length, two!.length, three!.length], [1, 1, 1]);
    assert.deepEqual(two![0]!.referenced_tweets, [{ type: 'replied_to', id: one![0]!.id }]);
    assert.deepEqual(three![0]!.referenced_tweets, [{ type: 'replied_to', id: two![0]!.id }]);
    const stored = await rows(threadId);
    assert.ok(stored.every((r) => r.published_at!.getTime() >= at.getTime()), 'never before its time');
    assert.deepEqual(stored.map((r) => [r.status, r.platform_post_id]), [['published', one![0]!.id], ['published', two![0]!.id], ['published', three![0]!.id]]);
    // No read at the start, no claim through the task queue, no part sent nor record made from the workflow, and no
    // media cleanup for a thread without media.
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(threadId)), ['publishThreadWhenDue']);
  });

  it('a thread cancelled during the hold: nothing claimed at the instant, nothing sent', async () => {
    const { threadId, ids } = await heldThread(['cancelled held one', 'cancelled held two']);
    const del = await h.api.request('DELETE', `/api/v1/posts/${ids[1]}`);
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(await settle(threadId), { outcome: 'gone' });
    assert.deepEqual((await rows(threadId)).map((r) => r.status), ['deleted', 'deleted']);
    assert.equal(tweetsOf('cancelled held one').length, 0);
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(threadId)), ['publishThreadWhenDue', 'heldThreadState']);
  });

  it('a thread rescheduled later during the hold: the stale hold is dropped, the thread goes out once at its new time', async () => {
    const { threadId, ids, at } = await heldThread(['moved held one', 'moved held two']);
    const later = new Date(at.getTime() + 20 * 60_000);
    const res = await h.api.request('PATCH', `/api/v1/posts/${ids[1]}`, { body: { schedule_at: later.toISOString() } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await settle(threadId), { outcome: 'published', firstComment: null });
    assert.deepEqual([tweetsOf('moved held one').length, tweetsOf('moved held two').length], [1, 1]);
    assert.ok((await rows(threadId)).every((r) => r.published_at!.getTime() >= later.getTime()), 'not before the new time');
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(threadId)), ['publishThreadWhenDue', 'heldThreadState', 'publishThreadWhenDue']);
  });

  it('the holds of one instant are claimed whole in one statement; a stale or a second hold takes nothing and sends nothing', async () => {
    const threads = await Promise.all([['together a1', 'together a2'], ['together b1', 'together b2']].map((texts) => scheduledThread(texts, 50)));
    for (const { threadId } of threads) await endWaitingWorkflow(h, threadWorkflowId(threadId));
    const dueAt = Date.now() + 300;
    await h.db.updateTable('posts').set({ scheduled_at: new Date(dueAt) }).where('thread_id', 'in', threads.map((t) => t.threadId)).execute();
    const statements: string[] = [];
    const counted = countingDatabase((await testDatabase()).url, statements, 4);
    try {
      const activities = createActivities({ config: testConfig(), db: counted.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });
      const env = new MockActivityEnvironment(platformCallInfo(60_000));
      // A stale hold (another time): nothing taken, the rows' time reported.
      assert.deepEqual(await env.run(activities.publishThreadWhenDue, { threadId: threads[0]!.threadId, dueAt: dueAt - 60_000, holdMs: 0 }), { claim: { kind: 'wait', until: dueAt, retry: { failures: 0, notBefore: 0 }, scheduleVersion: 0 } });
      statements.length = 0;
      const steps = (await Promise.all(threads.map(({ threadId }) => new MockActivityEnvironment(platformCallInfo(60_000)).run(activities.publishThreadWhenDue, { threadId, dueAt, holdMs: 60_000 })))) as ThreadStep[];
      assert.equal(statements.filter((text) => /^update "posts" set "status" = \$1, "request_origin" = \$2/.test(text)).length, 1, statements.join('\n'));
      for (const [i, step] of steps.entries()) {
        assert.equal(step.claim?.kind, 'publish');
        assert.deepEqual(step.sent?.map((attempt) => attempt?.ok), [true, true]);
        assert.equal(step.recorded, true);
        const [first, second] = [tweetsOf(`together ${'ab'[i]}1`), tweetsOf(`together ${'ab'[i]}2`)];
        assert.deepEqual([first.length, second.length], [1, 1]);
        assert.ok(Date.parse(first[0]!.created_at) >= dueAt, 'never before its time');
        assert.deepEqual(second[0]!.referenced_tweets, [{ type: 'replied_to', id: first[0]!.id }]);
      }
      // A second hold of the same instant (its workflow lost track of the first): it takes nothing and reports what
      // the rows say, both parts out and recorded.
      const again = (await env.run(activities.publishThreadWhenDue, { threadId: threads[0]!.threadId, dueAt, holdMs: 0 })) as ThreadStep;
      assert.deepEqual([again.claim?.kind, again.sent?.map((attempt) => attempt?.ok), again.recorded], ['publish', [true, true], true]);
      assert.equal(tweetsOf('together a1').length, 1, 'sent once');
      assert.deepEqual([...new Set((await Promise.all(threads.map((t) => rows(t.threadId)))).flat().map((r) => r.status))], ['published']);
    } finally {
      await counted.close();
    }
  });
});
