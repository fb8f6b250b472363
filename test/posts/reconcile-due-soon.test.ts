import assert from 'node:assert/strict';
import { reconcilePosts } from '../../src/posts/reconcile';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';
import { withHandles } from './temporal-handles';

/**
 * A scheduled post whose workflow was lost while it waited (an operator's terminate in the Web UI, a standalone
 * temporal-dev that restarted) gets it back from the periodic look before its time, not once overdue (README
 * "Running and operating", 2026-12-07).
 */
describe('The periodic reconcile looks at scheduled posts due soon', function () {
  this.timeout(90_000);
  let h: PostsHarness;
  // A database of its own: the look reads every user's posts, and in the shared one it would start the workflows
  // of other files' scheduled posts on this harness's worker and stand-ins.
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase();
    h = await startPostsHarness({ database });
  });
  after(async () => {
    await h?.stop();
    await database?.close();
  });

  /** The look a minute after the last clean one: the posts changed in the last 2 minutes, the overdue, the due soon. */
  const periodicLook = () => reconcilePosts({ ...h.reconcilerRuntime(), now: h.now }, { changedWithinMs: 2 * 60_000 });

  it('a post whose workflow is terminated shortly before its time is started again by the next look and goes out on time', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    // Tests hold for 250 ms (`testConfig`), so the look reaches 2 minutes and 250 ms ahead.
    const at = new Date(h.now().getTime() + 90_000);
    const later = new Date(h.now().getTime() + 60 * 60_000);
    const ids: string[] = [];
    for (const [text, when] of [['due in 90 seconds', at], ['due in an hour', later]] as const) {
      const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: when.toISOString() } });
      assert.equal(res.status, 201, res.text);
      ids.push(res.body.data.id);
    }
    const [soon, far] = ids as [string, string];
    // Created long ago as far as the look can tell (its reach covers the last 2 minutes), and then lost.
    const longAgo = new Date(Date.now() - 30 * 60_000);
    await h.db.updateTable('posts').set({ created_at: longAgo as never, updated_at: longAgo }).where('id', 'in', ids).execute();
    for (const id of ids) await h.env.client.workflow.getHandle(postWorkflowId(id)).terminate('an operator, in the Web UI');

    const look = await periodicLook();
    assert.ok(look.started.includes(postWorkflowId(soon)), 'the post due within the lead and two looks got its workflow back');
    assert.ok(!look.started.includes(postWorkflowId(far)), 'a post due in an hour is left to a later look (the look stays a few minutes of posts)');

    assert.equal((await h.settle(soon) as { outcome: string }).outcome, 'published');
    const row = await h.db.selectFrom('posts').select(['status', 'published_at', 'retry_count']).where('id', '=', soon).executeTakeFirstOrThrow();
    assert.equal(row.status, 'published');
    assert.equal(row.retry_count, 0);
    assert.ok(row.published_at!.getTime() >= at.getTime(), 'not before its time');
    assert.ok(row.published_at!.getTime() - at.getTime() < 5_000, `on time, not once overdue: ${row.published_at!.getTime() - at.getTime()} ms late`);
    const creates = h.standIns.x.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets');
    assert.equal(creates.length, 1, 'sent once');
  });

  it('a post due soon is described by the first look that reads it, not again by every look until it is overdue', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 100_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'due in 100 seconds, scheduled long ago', schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    const workflowId = postWorkflowId(id);
    // Scheduled long ago, by another process: this one neither started it nor saw it run.
    const longAgo = new Date(Date.now() - 30 * 60_000);
    await h.db.updateTable('posts').set({ created_at: longAgo as never, updated_at: longAgo }).where('id', '=', id).execute();
    try {
      const described: string[] = [];
      const base = h.reconcilerRuntime();
      const rt = withHandles(base, (wid) => {
        if (wid !== workflowId) return undefined;
        described.push(wid);
        return undefined;
      });
      // One runtime across the looks, as the service's reconciler keeps one; `now` is moved to each look's moment.
      let nowMs = h.now().getTime();
      const look = () => reconcilePosts({ ...rt, now: () => new Date(nowMs) }, { changedWithinMs: 2 * 60_000 });

      const first = await look();
      assert.deepEqual(described, [workflowId], 'the first look describes it');
      assert.ok(!first.started.includes(workflowId), 'running: nothing started');
      nowMs += 60_000;
      await look();
      nowMs += 30_000;
      await look();
      assert.equal(described.length, 1, 'the next looks before its time skip it');
      nowMs = at.getTime() + 30_000;
      await look();
      assert.equal(described.length, 1, 'nor while it is due, not yet overdue');
      nowMs = at.getTime() + 61_000;
      await look();
      assert.equal(described.length, 2, 'once overdue and still scheduled, it is described again');
    } finally {
      await h.env.client.workflow.getHandle(workflowId).terminate('test').catch(() => undefined);
      await h.db.deleteFrom('posts').where('id', '=', id).execute();
    }
  });
});
