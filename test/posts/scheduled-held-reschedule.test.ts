import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { platformCallInfo } from '../helpers/temporal';
import { moveScheduledTime } from '../../src/posts/repository';
import { postWorkflowId, signalPost } from '../../src/posts/workflow-client';
import { testDatabase } from '../helpers/db';
import { gatedDatabase } from '../helpers/gated-database';
import { insertXAccount } from './fixtures';
import { activitiesOf, endWaitingWorkflow, harnessActivities, startPostsHarness, type PostsHarness } from './harness';

/**
 * Reschedules that race a held post (README "Scheduled bursts"): a hold abandoned by a move away and back to the same
 * instant must never claim the post, and a second move signalled while the workflow reads the first must not be lost.
 * The lead is long enough to act during the hold in real time (a running activity stops time skipping) and to keep a
 * read of the row open past the workflow task's heartbeat (8 s of its 10 s timeout), when a signal reaches the
 * workflow before the read's result.
 */
const LEAD_MS = 25_000;

/** The read a held workflow makes when signalled (`heldPostState` → `findPost`), as the pool sends it. */
const POST_BY_ID = 'select * from "posts" where "id" = $1';

describe('Scheduled posts: reschedules racing the hold (issue 15, audit D findings 1 and 4)', function () {
  this.timeout(240_000);
  let h: PostsHarness;
  let gated: ReturnType<typeof gatedDatabase>;

  before(async function () {
    const shared = await testDatabase();
    gated = gatedDatabase(shared.url, { applicationName: 'herald-test-held-reschedule', isRead: (text) => text === POST_BY_ID });
    h = await startPostsHarness({ posts: { dueLeadMs: LEAD_MS }, database: { ...gated.handle, url: shared.url, name: shared.name } });
  });
  after(async () => {
    await h?.stop();
    await gated?.handle.close();
  });

  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tweetsOf = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text);
  const realSleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

  /** Until the workflow has run `activities` (real time: the hold is running, nothing skips). */
  async function untilActivities(id: string, activities: string[]): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if ((await activitiesOf(h, postWorkflowId(id))).length >= activities.length) break;
      await realSleep(50);
    }
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), activities);
  }

  /** A post of its own account, scheduled 30 minutes ahead, its workflow now holding it with ~20 s of real time left. */
  async function heldPost(text: string, firstComment?: string): Promise<{ id: string; at: Date }> {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const body = { account_id: account.id, text, schedule_at: at.toISOString(), ...(firstComment ? { first_comment: firstComment } : {}) };
    const res = await h.api.request('POST', '/api/v1/posts', { body });
    assert.equal(res.status, 201, res.text);
    await h.env.sleep(30 * 60_000 - LEAD_MS + 5_000);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(res.body.data.id)), ['publishWhenDue']);
    return { id: res.body.data.id, at };
  }

  it('moved away and back to its time during the hold: the current hold sends it once, with its first comment; the abandoned one claims nothing', async () => {
    const { id, at } = await heldPost('away and back while held', 'away and back comment');
    const later = new Date(at.getTime() + 20 * 60_000);
    const away = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: later.toISOString() } });
    assert.equal(away.status, 200, away.text);
    // The workflow looked, found its hold stale and dropped it (the hold goes on in the worker, abandoned).
    await untilActivities(id, ['publishWhenDue', 'heldPostState']);
    // Back to the first time, closer than the API would accept: written as the API writes a move, then its signal.
    await h.db.transaction().execute((trx) => moveScheduledTime(trx, [id], 'scheduled', { scheduled_at: at, timezone: null }));
    await signalPost(h.reconcilerRuntime(), id, 'reschedule');
    // A new hold for the same instant, beside the abandoned one, both waiting on the instant's one timer.
    await untilActivities(id, ['publishWhenDue', 'heldPostState', 'claimAndPublish', 'publishWhenDue']);
    const settled = (await h.settle(id)) as { outcome: string; firstComment?: string };
    const published = await row(id);
    // The outcome, not the comment step's report: twice, under heavy machine load, that step reported `skipped` for
    // the comment the row shows posted (cause not established; a re-run of the step would do it, audit D finding 2's
    // ground); the row and the platform say what went out.
    assert.equal(settled.outcome, 'published', JSON.stringify({ settled, activities: await activitiesOf(h, postWorkflowId(id)) }));
    assert.deepEqual([published.status, published.first_comment_status], ['published', 'posted']);
    assert.equal((published as Record<string, unknown>).schedule_version, 2, 'moved twice');
    assert.ok(published.published_at!.getTime() >= at.getTime(), 'not before its time');
    assert.equal(tweetsOf('away and back while held').length, 1);
    assert.equal(tweetsOf('away and back comment').length, 1);
    // Sent by the workflow's current hold: its report, then the comment and nothing claimed again.
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['publishWhenDue', 'heldPostState', 'claimAndPublish', 'publishWhenDue', 'publishFirstComment']);
  });

  it('a hold given an older schedule version claims nothing at exactly the row time; the current version takes it', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'versioned hold', schedule_at: new Date(h.now().getTime() + 50 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    await endWaitingWorkflow(h, postWorkflowId(id));
    const dueAt = Date.now() + 300;
    // Moved twice (away and back would do the same): the row is at version 2.
    for (let i = 0; i < 2; i++) await h.db.transaction().execute((trx) => moveScheduledTime(trx, [id], 'scheduled', { scheduled_at: new Date(dueAt), timezone: null }));
    const activities = harnessActivities(h);
    const stale = await new MockActivityEnvironment(platformCallInfo(60_000)).run(activities.publishWhenDue, { postId: id, dueAt, holdMs: 60_000, scheduleVersion: 1 });
    assert.deepEqual(stale, { claim: null }, 'at its time but not its version: no claim, nothing sent');
    assert.deepEqual([(await row(id)).status, tweetsOf('versioned hold').length], ['scheduled', 0]);
    const current = (await new MockActivityEnvironment(platformCallInfo(60_000)).run(activities.publishWhenDue, { postId: id, dueAt, holdMs: 0, scheduleVersion: 2 })) as { claim: { kind: string } | null };
    assert.equal(current.claim?.kind, 'publish');
    assert.deepEqual([(await row(id)).status, tweetsOf('versioned hold').length], ['published', 1]);
  });

  it('moved a second time while the workflow reads the first move: it goes out at the last time, not at the first move', async () => {
    const { id, at } = await heldPost('moved twice while held');
    const first = new Date(at.getTime() + 6 * 3_600_000);
    const last = new Date(at.getTime() + 10 * 60_000);
    const read = gated.holdNextRead(id);
    const away = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: first.toISOString() } });
    assert.equal(away.status, 200, away.text);
    await read.sent;
    // The read answers the first move; the second is written and signalled while it is out.
    const again = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: last.toISOString() } });
    assert.equal(again.status, 200, again.text);
    // Past the workflow task's heartbeat: the signal reaches the workflow before the read's answer does.
    await realSleep(10_000);
    read.release();
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    // The workflow's clock when it ended: a hold at the first move's time records `published_at` as the instant it
    // held for, not when it went out, so the clock tells the lateness.
    const ended = await h.env.currentTimeMs();
    assert.ok(ended < first.getTime(), `out at ${new Date(ended).toISOString()}, after the first move ${first.toISOString()}: the last move was lost`);
    assert.ok((await row(id)).published_at!.getTime() >= last.getTime(), 'not before the last time');
    assert.equal(tweetsOf('moved twice while held').length, 1);
    // The look that answered the first move, a second look for the move signalled meanwhile, the hold at the last time.
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['publishWhenDue', 'heldPostState', 'claimAndPublish', 'publishWhenDue']);
  });
});
