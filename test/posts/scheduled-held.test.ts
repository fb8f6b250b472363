import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { platformCallInfo } from '../helpers/temporal';
import { createActivities } from '../../activities';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { postWorkflowId, signalPost } from '../../src/posts/workflow-client';
import type { PublishPostInput } from '../../workflows/publish-post';
import { testConfig } from '../helpers/api';
import { countingDatabase } from '../helpers/counting-database';
import { testDatabase } from '../helpers/db';
import { insertXAccount, testSealedBox } from './fixtures';
import { activitiesOf, endWaitingWorkflow, startPostsHarness, type PostsHarness } from './harness';

/** A lead long enough to act during the hold, short enough to wait for in real time (a running activity stops skipping). */
const LEAD_MS = 3_000;

describe('Scheduled posts: prepared a lead ahead, held in the worker, sent at the instant (issue 15)', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async function () {
    h = await startPostsHarness({ posts: { dueLeadMs: LEAD_MS } });
  });
  after(async () => h?.stop());

  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tweetsOf = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text);

  /** A post of its own account (the 5-minute spacing rule), scheduled 30 minutes ahead, its workflow now holding it. */
  async function heldPost(text: string): Promise<{ id: string; at: Date; account: AccountRow }> {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    // Skipped to the wake-up a lead ahead, then real time: the hold is running, a second and a half before the instant.
    await h.env.sleep(30 * 60_000 - LEAD_MS / 2);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(res.body.data.id)), ['publishWhenDue']);
    assert.equal((await row(res.body.data.id)).status, 'scheduled');
    return { id: res.body.data.id, at, account };
  }

  /** A post whose activities a test calls itself: its workflow is ended first, so it never claims the row meanwhile. */
  async function postWithoutWorkflow(text: string): Promise<string> {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: new Date(h.now().getTime() + 50 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    await endWaitingWorkflow(h, postWorkflowId(res.body.data.id));
    return res.body.data.id;
  }

  function directActivities() {
    return createActivities({ config: testConfig(), db: h.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });
  }

  it('holds until scheduled_at by the worker clock, whatever hold it was given, and only a row still due at that exact time is taken', async () => {
    const id = await postWithoutWorkflow('held by the worker clock');
    const activities = directActivities();
    const env = new MockActivityEnvironment(platformCallInfo(60_000));

    // A stale hold (the row's time is another): nothing taken, nothing sent, the row's time reported.
    const stale = await env.run(activities.publishWhenDue, { postId: id, dueAt: Date.now(), holdMs: 0 });
    assert.deepEqual(stale, { claim: { kind: 'wait', until: (await row(id)).scheduled_at!.getTime(), retry: { failures: 0, notBefore: 0 }, scheduleVersion: 0 } });
    assert.equal((await row(id)).status, 'scheduled');

    // The row due 400 ms from now by this process's clock; the hold it is given is a minute: the clock decides.
    const dueAt = Date.now() + 400;
    await h.db.updateTable('posts').set({ scheduled_at: new Date(dueAt) }).where('id', '=', id).execute();
    const started = Date.now();
    const step = (await env.run(activities.publishWhenDue, { postId: id, dueAt, holdMs: 60_000 })) as Awaited<ReturnType<typeof activities.publishWhenDue>>;
    assert.ok(Date.now() - started < 30_000, 'held until the instant, not for the whole hold given');
    assert.equal(step.claim?.kind, 'publish', JSON.stringify(step));
    assert.equal(step.attempt?.ok, true);
    const [tweet, ...more] = tweetsOf('held by the worker clock');
    assert.equal(more.length, 0);
    assert.ok(Date.parse(tweet!.created_at) >= dueAt, `sent at ${tweet!.created_at}, due ${new Date(dueAt).toISOString()}: never before`);
    assert.equal((await row(id)).status, 'published');

    // A second hold of the same instant (a stale one that lost): the row is no longer scheduled, nothing is sent again.
    assert.deepEqual(await env.run(activities.publishWhenDue, { postId: id, dueAt, holdMs: 0 }), { claim: { kind: 'gone' } });
    assert.equal(tweetsOf('held by the worker clock').length, 1);
  });

  it('the holds of one instant are claimed together: one statement for three posts, each sent once', async () => {
    const ids = await Promise.all(['together one', 'together two', 'together three'].map((text) => postWithoutWorkflow(text)));
    const dueAt = Date.now() + 300;
    await h.db.updateTable('posts').set({ scheduled_at: new Date(dueAt) }).where('id', 'in', ids).execute();
    const statements: string[] = [];
    const counted = countingDatabase((await testDatabase()).url, statements, 4);
    try {
      const activities = createActivities({ config: testConfig(), db: counted.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue: h.taskQueue } });
      const steps = await Promise.all(ids.map((postId) => new MockActivityEnvironment(platformCallInfo(60_000)).run(activities.publishWhenDue, { postId, dueAt, holdMs: 60_000 })));
      assert.deepEqual(steps.map((step) => (step as { claim: { kind: string } }).claim.kind), ['publish', 'publish', 'publish']);
      assert.equal(statements.filter((text) => /^with "marked" as \(update "posts" set "status"/.test(text)).length, 1, statements.join('\n'));
      for (const text of ['together one', 'together two', 'together three']) assert.equal(tweetsOf(text).length, 1, text);
    } finally {
      await counted.close();
    }
  });

  it('a hold cancelled in the worker (it shuts down) fails before any claim: the row stays scheduled for the workflow to claim', async () => {
    const id = await postWithoutWorkflow('held by a worker going away');
    const dueAt = Date.now() + 60_000;
    await h.db.updateTable('posts').set({ scheduled_at: new Date(dueAt) }).where('id', '=', id).execute();
    const env = new MockActivityEnvironment(platformCallInfo(60_000));
    const held = env.run(directActivities().publishWhenDue, { postId: id, dueAt, holdMs: 60_000 });
    env.cancel('WORKER_SHUTDOWN');
    await assert.rejects(held);
    assert.equal((await row(id)).status, 'scheduled');
    assert.equal(tweetsOf('held by a worker going away').length, 0);
    // Not left scheduled without a workflow: later suites reconcile every row of the shared test database.
    assert.equal((await h.api.request('DELETE', `/api/v1/posts/${id}`)).status, 200);
  });

  it('a workflow started for a time waits for it unread, yet a change signalled before its first task still wakes it', async () => {
    // The API starts a scheduled post's workflow with the time it wrote, and the workflow waits for it with no look
    // at the row. Here the row moved earlier before the workflow ran at all (the signal delivered with its start):
    // the signal must make it look, or it would sleep to the old time and go out late.
    const id = await postWithoutWorkflow('moved before its first task');
    await h.syncClock();
    const earlier = new Date(h.now().getTime() + 20 * 60_000);
    const stale = new Date(h.now().getTime() + 60 * 60_000);
    await h.db.updateTable('posts').set({ scheduled_at: earlier, updated_at: new Date() }).where('id', '=', id).execute();
    const rt = h.reconcilerRuntime();
    const input: PublishPostInput = {
      postId: id,
      scheduledRetryDelaysMs: [...rt.scheduledRetryDelaysMs],
      immediateRetryDelaysMs: [...rt.immediateRetryDelaysMs],
      dueLeadMs: LEAD_MS,
      scheduledAt: stale.getTime(),
    };
    await h.env.client.workflow.signalWithStart('publishPost', { workflowId: postWorkflowId(id), taskQueue: h.taskQueue, args: [input], signal: 'reschedulePost' });
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    const published = await row(id);
    assert.ok(published.published_at!.getTime() >= earlier.getTime(), 'not before its time');
    assert.ok(published.published_at!.getTime() < stale.getTime(), `out at ${published.published_at!.toISOString()}, not at the stale time`);
    assert.equal(tweetsOf('moved before its first task').length, 1);
    // The look the signal asked for, then the hold at the row's time.
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['claimAndPublish', 'publishWhenDue']);
  });

  it('a post cancelled during the hold: the hold claims nothing at the instant, nothing is sent', async () => {
    const { id } = await heldPost('cancelled while held');
    const del = await h.api.request('DELETE', `/api/v1/posts/${id}`);
    assert.deepEqual(del.body, { data: { id, deleted: true } });
    assert.deepEqual(await h.settle(id), { outcome: 'gone' });
    assert.equal((await row(id)).status, 'deleted');
    assert.equal(tweetsOf('cancelled while held').length, 0);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['publishWhenDue', 'heldPostState']);
  });

  it('a post rescheduled later during the hold: the stale hold is dropped, the post waits and goes out once at its new time', async () => {
    const { id, at } = await heldPost('rescheduled later while held');
    const later = new Date(at.getTime() + 20 * 60_000);
    const res = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: later.toISOString() } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    const published = await row(id);
    assert.ok(published.published_at!.getTime() >= later.getTime(), 'not before the new time');
    assert.equal(tweetsOf('rescheduled later while held').length, 1);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['publishWhenDue', 'heldPostState', 'publishWhenDue']);
  });

  it('a post rescheduled earlier within the lead: a new hold sends it at its new time, not at the old one', async () => {
    const { id, at } = await heldPost('rescheduled earlier while held');
    // Earlier than the API would accept (it asks for a future time with room): written as the API writes a reschedule,
    // then the same signal, to land inside the hold that is running.
    await h.syncClock();
    const earlier = new Date(h.now().getTime() + 300);
    assert.ok(earlier < at);
    await h.db.updateTable('posts').set({ scheduled_at: earlier, updated_at: new Date() }).where('id', '=', id).execute();
    await signalPost(h.reconcilerRuntime(), id, 'reschedule');
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    const published = await row(id);
    assert.ok(published.published_at!.getTime() >= earlier.getTime(), 'not before its new time');
    assert.ok(published.published_at!.getTime() < at.getTime(), `out at ${published.published_at!.toISOString()}, before the old time ${at.toISOString()}`);
    assert.equal(tweetsOf('rescheduled earlier while held').length, 1);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['publishWhenDue', 'heldPostState', 'publishWhenDue']);
  });

  it('an edit during the hold keeps the hold (same instant): the edited text goes out once, on time', async () => {
    const { id, at } = await heldPost('edited while held');
    const res = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { text: 'edited while held, new text' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    assert.ok((await row(id)).published_at!.getTime() >= at.getTime());
    assert.deepEqual([tweetsOf('edited while held').length, tweetsOf('edited while held, new text').length], [0, 1]);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['publishWhenDue', 'heldPostState']);
  });
});
