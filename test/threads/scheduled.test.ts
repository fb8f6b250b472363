import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AccountRow } from '../../src/db/tables/accounts';
import { usageFor } from '../../src/quota/quota';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { createLogger } from '../../src/logger';
import { reconcilePosts } from '../../src/posts/reconcile';
import { createPostsRuntime } from '../../src/posts/runtime';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { testConfig } from '../helpers/api';
import { insertXAccount, testSealedBox, xAnswers, refusalsTakenAsReal } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/** Scheduled threads: one shared time on a durable timer, three retries on every part, or failure at once when parts stayed live. */
describe('Scheduled threads: shared time, retries, rollback left live, cancellation', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const inMinutes = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000);
  const rows = (threadId: string) => h.db.selectFrom('posts').selectAll().where('thread_id', '=', threadId).orderBy('thread_order').execute();
  const settle = async (threadId: string) => {
    const result = await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result();
    await h.syncClock();
    return result;
  };
  const liveWithText = (text: string) => h.standIns.x.liveTweets().filter((t) => t.text === text);
  /** X refuses duplicate content: a live post with this text makes every later create of it fail with 403. */
  const occupy = async (text: string) => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text } });
    assert.equal(res.status, 201, res.text);
  };

  it('waits for the shared time, then publishes the whole chain at that instant', async () => {
    await h.syncClock();
    const at = inMinutes(60);
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'later one' }, { text: 'later two' }], first_comment: 'later comment', schedule_at: at.toISOString() },
    });
    assert.equal(res.status, 201, res.text);
    const { thread_id, posts } = res.body.data;
    assert.deepEqual(
      posts.map((p: any) => [p.status, p.scheduled_at, p.thread_id, p.thread_order, p.platform_post_id]),
      [['scheduled', at.toISOString(), thread_id, 1, null], ['scheduled', at.toISOString(), thread_id, 2, null]],
    );
    await h.env.sleep('59 minutes');
    assert.equal(liveWithText('later one').length, 0, 'not before its time');
    assert.deepEqual(await settle(thread_id), { outcome: 'published', firstComment: 'posted' });
    const [one] = liveWithText('later one');
    const [two] = liveWithText('later two');
    assert.deepEqual(two!.referenced_tweets, [{ type: 'replied_to', id: one!.id }]);
    const stored = await rows(thread_id);
    assert.deepEqual(stored.map((r) => [r.status, r.platform_post_id, r.published_at!.getTime() >= at.getTime()]), [['published', one!.id, true], ['published', two!.id, true]]);
  });

  it('a refused part is rolled back and the thread retried three times (retry_count on every part), then failed with the quota returned', async () => {
    await occupy('always refused part');
    await h.syncClock();
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'retry head' }, { text: 'always refused part' }], schedule_at: inMinutes(10).toISOString() },
    });
    assert.equal(res.status, 201, res.text);
    const { thread_id } = res.body.data;
    await h.env.sleep(10.5 * 60_000);
    const waiting = await rows(thread_id);
    assert.deepEqual(waiting.map((r) => [r.status, r.retry_count, r.platform_post_id]), [['scheduled', 1, null], ['scheduled', 1, null]]);
    assert.equal(liveWithText('retry head').length, 0, 'the head was deleted again');

    const result = (await settle(thread_id)) as any;
    assert.equal(result.outcome, 'failed');
    assert.equal(result.code, 'upstream_error');
    const failed = await rows(thread_id);
    assert.deepEqual(
      failed.map((r) => [r.status, r.retry_count, r.platform_post_id, r.platform_post_url]),
      [['failed', 4, null, null], ['failed', 4, null, null]],
      'the head deleted again names no post',
    );
    assert.equal(failed[0]!.error_message, result.message);
    assert.match(result.message, /^X .*\(part 2 of 2\)\. The 1 published part was deleted again\.$/);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'retry head').length, 4, 'four attempts');
    assert.equal(liveWithText('retry head').length, 0);
    const after = await usageFor(h.db, h.api.userId, h.now());
    assert.equal(after.scheduled, before.scheduled);
    assert.equal(after.posts, before.posts);
  });

  it('a thread waiting for a retry whose workflow is lost is not sent before the retry is due, and keeps its retry count', async () => {
    await occupy('refused across a restart');
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'restart head' }, { text: 'refused across a restart' }], schedule_at: inMinutes(10).toISOString() },
    });
    assert.equal(res.status, 201, res.text);
    const { thread_id } = res.body.data;
    // Attempts at 10 min and 11 min (after the first retry's minute): the next is due 5 minutes after the second (16).
    await h.env.sleep(11.5 * 60_000);
    assert.deepEqual((await rows(thread_id)).map((r) => [r.status, r.retry_count]), [['scheduled', 2], ['scheduled', 2]]);

    await h.env.client.workflow.getHandle(threadWorkflowId(thread_id)).terminate('lost, as after a restart of the embedded server');
    const reconciled = await reconcilePosts(h.reconcilerRuntime(), { changedWithinMs: 5 * 60_000 });
    assert.ok(reconciled.started.includes(threadWorkflowId(thread_id)));
    await h.env.sleep('4 minutes');
    assert.deepEqual((await rows(thread_id)).map((r) => r.retry_count), [2, 2], 'nothing sent before the retry is due');
    await h.env.sleep('1 minute');
    assert.deepEqual((await rows(thread_id)).map((r) => r.retry_count), [3, 3], 'the third attempt once it was due');

    assert.equal(((await settle(thread_id)) as { outcome: string }).outcome, 'failed');
    assert.deepEqual((await rows(thread_id)).map((r) => [r.status, r.retry_count]), [['failed', 4], ['failed', 4]]);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'restart head').length, 4, 'four attempts in all, across the restart');
  });

  it('a rollback that leaves a part live fails the thread at once, with no retry, naming the live part', async () => {
    await occupy('refused after a live head');
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'stuck head' }, { text: 'refused after a live head' }], schedule_at: inMinutes(10).toISOString() },
    });
    assert.equal(res.status, 201, res.text);
    h.standIns.x.standIn.inject(
      { method: 'DELETE', path: /^\/2\/tweets\// },
      xAnswers.deleteRefused,
    );
    const result = (await settle(res.body.data.thread_id)) as any;
    const [head] = liveWithText('stuck head');
    assert.ok(head);
    assert.equal(result.code, 'thread_rollback_incomplete');
    assert.deepEqual(result.rollback, {
      platform: 'x',
      published: 1,
      rolled_back: [],
      still_live: [{ thread_order: 1, platform_post_id: head.id, platform_post_url: `https://x.com/${x.username}/status/${head.id}` }],
      rollback_supported: true,
      quota_refunded: true,
    });
    const failed = await rows(res.body.data.thread_id);
    assert.deepEqual(failed.map((r) => [r.status, r.retry_count]), [['failed', 1], ['failed', 1]]);
    assert.match(failed[0]!.error_message!, /\(part 2 of 2\)\. Part 1 is still live and could not be deleted; delete it on the platform before sending the thread again\.$/);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'stuck head').length, 1, 'no retry');
    const liveUrl = `https://x.com/${x.username}/status/${head.id}`;
    assert.deepEqual(failed.map((r) => [r.platform_post_id, r.platform_post_url]), [[head.id, liveUrl], [null, null]], 'only the live part names its post');

    // DELETE of the live part deletes it on the platform first, as a published post's; a refusal leaves it failed.
    const headId = failed[0]!.id;
    h.standIns.x.standIn.inject(
      { method: 'DELETE', path: /^\/2\/tweets\// },
      xAnswers.deleteRefused,
    );
    const refused = await h.api.request('DELETE', `/api/v1/posts/${headId}`);
    assert.equal(refused.status, 502, refused.text);
    assert.equal((await rows(res.body.data.thread_id))[0]!.status, 'failed');
    const deleted = await h.api.request('DELETE', `/api/v1/posts/${headId}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(liveWithText('stuck head').length, 0, 'gone from the platform');
    assert.equal((await rows(res.body.data.thread_id))[0]!.status, 'deleted');
  });

  it('a credential X refuses when a scheduled thread goes out cancels it as a scheduled post: deleted, connection_lost, quota returned', async () => {
    await h.syncClock();
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await refusalsTakenAsReal(h.db, account);
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: account.id, posts: [{ text: 'refused head' }, { text: 'refused tail' }], schedule_at: inMinutes(20).toISOString() },
    });
    assert.equal(res.status, 201, res.text);
    const later = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'later on that account', schedule_at: inMinutes(300).toISOString() } });
    assert.equal(later.status, 201, later.text);
    // The head goes out, the tail meets the refusal: the head is deleted again, so nothing of the thread is live.
    const tweets = { method: 'POST', path: '/2/tweets' };
    h.standIns.x.standIn.inject(tweets, { kind: 'delay', ms: 0 }, 1);
    h.standIns.x.standIn.inject(tweets, xAnswers.unauthorized);
    assert.deepEqual(await settle(res.body.data.thread_id), { outcome: 'cancelled' });
    const parts = await rows(res.body.data.thread_id);
    assert.deepEqual(
      parts.map((r) => [r.status, r.error_message, r.platform_post_id, r.retry_count]),
      [['deleted', 'connection_lost', null, 0], ['deleted', 'connection_lost', null, 0]],
    );
    assert.equal(liveWithText('refused head').length, 0);
    const laterRow = await h.db.selectFrom('posts').select(['status', 'error_message']).where('id', '=', later.body.data.id).executeTakeFirstOrThrow();
    assert.deepEqual(laterRow, { status: 'deleted', error_message: 'connection_lost' });
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    const cancelledEvents = await h.db.selectFrom('events').select('type').where('type', '=', 'post.cancelled').where(sql<boolean>`data->>'id' = any(${parts.map((p) => p.id)}::text[])`).execute();
    assert.equal(cancelledEvents.length, 2, 'a post.cancelled event for each part');
  });

  it('DELETE of any part cancels the whole scheduled thread (cancelled_ids), quota returned, nothing published', async () => {
    await h.syncClock();
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'cancel one' }, { text: 'cancel two' }, { text: 'cancel three' }], schedule_at: inMinutes(30).toISOString() },
    });
    const { thread_id, posts } = res.body.data;
    const ids = posts.map((p: any) => p.id);
    const del = await h.api.request('DELETE', `/api/v1/posts/${ids[1]}`);
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.body, { data: { id: ids[1], deleted: true, cancelled_ids: [...ids].sort() } });
    assert.deepEqual((await rows(thread_id)).map((r) => r.status), ['deleted', 'deleted', 'deleted']);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    assert.deepEqual(await settle(thread_id), { outcome: 'gone' });
    assert.equal(liveWithText('cancel one').length, 0);
  });

  it('the reconciler gives a scheduled thread whose workflow is gone one thread workflow (never a post workflow per part)', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'orphan one' }, { text: 'orphan two' }], schedule_at: inMinutes(45).toISOString() },
    });
    const { thread_id, posts } = res.body.data;
    const client = new Client({ connection: h.env.connection, namespace: h.env.namespace });
    await client.workflow.getHandle(threadWorkflowId(thread_id)).terminate('lost, as after a restart of the embedded server');
    const rt = createPostsRuntime({ config: testConfig(), db: h.db, logger: createLogger('silent'), temporal: client }, { taskQueue: h.taskQueue, adapters: h.standIns.adapters, sealedBox: testSealedBox, now: h.now });
    await reconcilePosts(rt, 'all');
    const description = await client.workflow.getHandle(threadWorkflowId(thread_id)).describe();
    assert.equal(description.status.name, 'RUNNING');
    for (const post of posts) {
      await assert.rejects(client.workflow.getHandle(postWorkflowId(post.id)).describe(), WorkflowNotFoundError);
    }
    // Judged by this thread's workflow, not by the count: the shared test database holds other suites' rows, whose
    // workflows (started by the first reconcile here) may end before the second.
    const again = await reconcilePosts(rt, 'all');
    assert.ok(!again.started.includes(threadWorkflowId(thread_id)), 'a running thread workflow is left alone');
    assert.deepEqual(await settle(thread_id), { outcome: 'published', firstComment: null });
    assert.deepEqual((await rows(thread_id)).map((r) => r.status), ['published', 'published']);
    assert.equal(liveWithText('orphan one').length, 1);
  });
});
