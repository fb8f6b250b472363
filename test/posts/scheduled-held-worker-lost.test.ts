import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createLogger } from '../../src/logger';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { testConfig } from '../helpers/api';
import { insertXAccount, testSealedBox } from './fixtures';
import { activitiesOf, startPostsHarness, workflowBundle, type PostsHarness } from './harness';

/** Short, so the instant passes while the dead worker's hold is still counted as running (its heartbeats end it). */
const LEAD_MS = 3_000;

/**
 * README "Scheduled bursts", heartbeats: a worker that dies during a held post's hold (no shutdown, nothing reported)
 * is seen when the hold's heartbeats stop (the 1-minute heartbeat timeout, in real time: a running activity stops time
 * skipping), and the workflow then takes its path from before the hold on the worker still alive: the claim, then
 * `publishToPlatform`. The post goes out once, and not before its time.
 */
describe('Scheduled posts: the worker holding a post dies, another sends it (issue 15)', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  // The harness's own worker polls another queue: the posts of this file go to the workers the test starts and stops.
  const taskQueue = `posts-held-lost-${randomUUID()}`;

  before(async function () {
    h = await startPostsHarness({ posts: { dueLeadMs: LEAD_MS, taskQueue } });
  });
  after(async () => h?.stop());

  const deps = () => ({
    config: testConfig(),
    db: h.db,
    logger: createLogger('silent'),
    posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, taskQueue, dueLeadMs: LEAD_MS },
  });
  const workerWith = async (activities: ReturnType<typeof createActivities>, options: { shutdownGraceTime?: number; shutdownForceTime?: number } = {}) =>
    Worker.create({ connection: h.env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities, ...options });

  it('the hold times out on its heartbeats, the workflow claims the post and sends it once, after its time', async () => {
    // The first worker's hold is that of a process that died: it never heartbeats, never answers, ignores cancellation.
    let holdsStarted = 0;
    const dying = await workerWith(
      {
        ...createActivities(deps()),
        publishWhenDue: () => {
          holdsStarted += 1;
          return new Promise<never>(() => undefined);
        },
      },
      { shutdownGraceTime: 10, shutdownForceTime: 100 },
    );
    const dyingRun = dying.run();

    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'held by a worker that died', schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const postId = res.body.data.id as string;
    // Skipped to the wake-up a lead ahead: the hold is running on the first worker.
    await h.env.sleep(30 * 60_000 - LEAD_MS / 2);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(postId)), ['publishWhenDue']);
    assert.equal(holdsStarted, 1);

    // Gone without a word: the forced shutdown leaves the hold unreported, as a killed process does (the SDK logs
    // 'Worker failed' with GracefulShutdownPeriodExpiredError: expected).
    dying.shutdown();
    await assert.rejects(dyingRun);
    const alive = await workerWith(createActivities(deps()));
    const aliveRun = alive.run();
    try {
      assert.deepEqual(await h.settle(postId), { outcome: 'published', firstComment: null });
    } finally {
      alive.shutdown();
      await aliveRun;
    }

    const tweets = h.standIns.x.tweets().filter((t) => t.text === 'held by a worker that died');
    assert.equal(tweets.length, 1, 'sent once');
    const row = await h.db.selectFrom('posts').select(['status', 'published_at', 'retry_count']).where('id', '=', postId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'published');
    assert.equal(row.retry_count, 0, 'a lost hold is not a failed attempt');
    assert.ok(row.published_at!.getTime() >= at.getTime(), `published ${row.published_at!.toISOString()}, due ${at.toISOString()}: never before`);
    // The lost hold, seen by its heartbeats (not failed by a shutdown), then the path from before the hold: the claim,
    // then one platform call.
    const history = await h.env.client.workflow.getHandle(postWorkflowId(postId)).fetchHistory();
    const endsOfHolds = (history.events ?? []).flatMap((e) =>
      e.activityTaskTimedOutEventAttributes ? [`timed out: ${String(e.activityTaskTimedOutEventAttributes.failure?.timeoutFailureInfo?.timeoutType)}`] : e.activityTaskFailedEventAttributes ? ['failed'] : e.activityTaskCompletedEventAttributes ? ['completed'] : [],
    );
    assert.match(endsOfHolds[0] ?? '', /^timed out: (4|TIMEOUT_TYPE_HEARTBEAT)$/, JSON.stringify(endsOfHolds));
    assert.deepEqual(await activitiesOf(h, postWorkflowId(postId)), ['publishWhenDue', 'claimPost', 'publishToPlatform']);
  });
});
