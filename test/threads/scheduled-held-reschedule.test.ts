import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { platformCallInfo } from '../helpers/temporal';
import type { ThreadStep } from '../../activities/thread-parts';
import { moveScheduledTime } from '../../src/posts/repository';
import { signalThread, threadWorkflowId } from '../../src/threads/workflow-client';
import { testDatabase } from '../helpers/db';
import { gatedDatabase } from '../helpers/gated-database';
import { insertXAccount } from '../posts/fixtures';
import { activitiesOf, endWaitingWorkflow, harnessActivities, startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * Reschedules that race a held thread, as test/posts/scheduled-held-reschedule.test.ts races a held post (README
 * "Threads"): a hold abandoned by a move away and back to the same instant must never claim the thread, and a second
 * move signalled while the workflow reads the first must not be lost. The lead is long enough to act during the hold
 * in real time and to keep a read of the rows open past the workflow task's heartbeat (8 s of its 10 s timeout).
 */
const LEAD_MS = 25_000;

/** The read a held workflow makes when signalled (`heldThreadState` → `loadThreadParts`, unlocked), by its text. */
const isThreadRead = (text: string | undefined) => text !== undefined && /^select .* from "posts" where "thread_id" = \$1 order by "thread_order"$/.test(text);

describe('Scheduled threads: reschedules racing the hold (the posts\' audit D findings 1 and 4, for threads)', function () {
  this.timeout(240_000);
  let h: PostsHarness;
  let gated: ReturnType<typeof gatedDatabase>;

  before(async function () {
    const shared = await testDatabase();
    gated = gatedDatabase(shared.url, { applicationName: 'herald-test-held-thread-reschedule', isRead: isThreadRead });
    h = await startPostsHarness({ plan: 'pro', posts: { dueLeadMs: LEAD_MS }, database: { ...gated.handle, url: shared.url, name: shared.name } });
  });
  after(async () => {
    await h?.stop();
    await gated?.handle.close();
  });

  const rows = (threadId: string) => h.db.selectFrom('posts').selectAll().where('thread_id', '=', threadId).orderBy('thread_order').execute();
  const tweetsOf = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text);
  const realSleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const settle = async (threadId: string) => {
    const result = await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result();
    await h.syncClock();
    return result;
  };

  /** Until the workflow has run `activities` (real time: the hold is running, nothing skips). */
  async function untilActivities(threadId: string, activities: string[]): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if ((await activitiesOf(h, threadWorkflowId(threadId))).length >= activities.length) break;
      await realSleep(50);
    }
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(threadId)), activities);
  }

  async function scheduledThread(texts: string[], minutes: number): Promise<{ threadId: string; ids: string[]; at: Date }> {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + minutes * 60_000);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: texts.map((text) => ({ text })), schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    return { threadId: res.body.data.thread_id, ids: res.body.data.posts.map((p: { id: string }) => p.id), at };
  }

  /** A thread of its own account, 30 minutes ahead, its workflow now holding it with ~20 s of real time left. */
  async function heldThread(texts: string[]) {
    const thread = await scheduledThread(texts, 30);
    await h.env.sleep(30 * 60_000 - LEAD_MS + 5_000);
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(thread.threadId)), ['publishThreadWhenDue']);
    return thread;
  }

  it('moved away and back to its time during the hold: the current hold sends it once; the abandoned one claims nothing', async () => {
    const texts = ['away and back one', 'away and back two'];
    const { threadId, ids, at } = await heldThread(texts);
    const later = new Date(at.getTime() + 20 * 60_000);
    const away = await h.api.request('PATCH', `/api/v1/posts/${ids[1]}`, { body: { schedule_at: later.toISOString() } });
    assert.equal(away.status, 200, away.text);
    // The workflow looked, found its hold stale and dropped it (the hold goes on in the worker, abandoned).
    await untilActivities(threadId, ['publishThreadWhenDue', 'heldThreadState']);
    // Back to the first time, closer than the API would accept: written as the API writes a move (every part), then its signal.
    await h.db.transaction().execute((trx) => moveScheduledTime(trx, ids, 'scheduled', { scheduled_at: at, timezone: null }));
    await signalThread(h.reconcilerRuntime(), threadId);
    // A new hold for the same instant, beside the abandoned one.
    await untilActivities(threadId, ['publishThreadWhenDue', 'heldThreadState', 'claimThread', 'publishThreadWhenDue']);
    const settled = await settle(threadId);
    assert.deepEqual(settled, { outcome: 'published', firstComment: null }, JSON.stringify({ settled, activities: await activitiesOf(h, threadWorkflowId(threadId)) }));
    const stored = await rows(threadId);
    assert.deepEqual(stored.map((r) => [r.status, r.schedule_version]), [['published', 2], ['published', 2]], 'every part moved twice');
    assert.ok(stored.every((r) => r.published_at!.getTime() >= at.getTime()), 'not before its time');
    assert.deepEqual(texts.map((text) => tweetsOf(text).length), [1, 1]);
    // Sent by the workflow's current hold: its report, and nothing claimed, sent or recorded again.
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(threadId)), ['publishThreadWhenDue', 'heldThreadState', 'claimThread', 'publishThreadWhenDue']);
  });

  it('a hold given an older schedule version claims nothing at exactly the rows\' time; the current version takes the thread whole', async () => {
    const texts = ['versioned thread one', 'versioned thread two'];
    const { threadId, ids } = await scheduledThread(texts, 50);
    await endWaitingWorkflow(h, threadWorkflowId(threadId));
    const dueAt = Date.now() + 300;
    // Moved twice (away and back would do the same): every part is at version 2.
    for (let i = 0; i < 2; i++) await h.db.transaction().execute((trx) => moveScheduledTime(trx, ids, 'scheduled', { scheduled_at: new Date(dueAt), timezone: null }));
    const activities = harnessActivities(h);
    const stale = await new MockActivityEnvironment(platformCallInfo(60_000)).run(activities.publishThreadWhenDue, { threadId, dueAt, holdMs: 60_000, scheduleVersion: 1 });
    assert.deepEqual(stale, { claim: null }, 'at its time but not its version: no claim, nothing sent');
    assert.deepEqual([(await rows(threadId)).map((r) => r.status), tweetsOf(texts[0]!).length], [['scheduled', 'scheduled'], 0]);
    const current = (await new MockActivityEnvironment(platformCallInfo(60_000)).run(activities.publishThreadWhenDue, { threadId, dueAt, holdMs: 0, scheduleVersion: 2 })) as ThreadStep;
    assert.deepEqual([current.claim?.kind, current.sent?.map((attempt) => attempt?.ok), current.recorded], ['publish', [true, true], true]);
    assert.deepEqual([(await rows(threadId)).map((r) => r.status), texts.map((text) => tweetsOf(text).length)], [['published', 'published'], [1, 1]]);
  });

  it('moved a second time while the workflow reads the first move: it goes out at the last time, not at the first move', async () => {
    const texts = ['moved twice one', 'moved twice two'];
    const { threadId, ids, at } = await heldThread(texts);
    const first = new Date(at.getTime() + 6 * 3_600_000);
    const last = new Date(at.getTime() + 10 * 60_000);
    const read = gated.holdNextRead(threadId);
    const away = await h.api.request('PATCH', `/api/v1/posts/${ids[0]}`, { body: { schedule_at: first.toISOString() } });
    assert.equal(away.status, 200, away.text);
    await read.sent;
    // The read answers the first move; the second is written and signalled while it is out.
    const again = await h.api.request('PATCH', `/api/v1/posts/${ids[0]}`, { body: { schedule_at: last.toISOString() } });
    assert.equal(again.status, 200, again.text);
    // Past the workflow task's heartbeat: the signal reaches the workflow before the read's answer does.
    await realSleep(10_000);
    read.release();
    assert.deepEqual(await settle(threadId), { outcome: 'published', firstComment: null });
    // The workflow's clock when it ended: a hold records `published_at` from the instant it held for, so the clock
    // tells the lateness.
    const ended = await h.env.currentTimeMs();
    assert.ok(ended < first.getTime(), `out at ${new Date(ended).toISOString()}, after the first move ${first.toISOString()}: the last move was lost`);
    assert.ok((await rows(threadId)).every((r) => r.published_at!.getTime() >= last.getTime()), 'not before the last time');
    assert.deepEqual(texts.map((text) => tweetsOf(text).length), [1, 1]);
    // The look that answered the first move, a claim that read the move signalled meanwhile, the hold at the last time.
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(threadId)), ['publishThreadWhenDue', 'heldThreadState', 'claimThread', 'publishThreadWhenDue']);
  });
});
