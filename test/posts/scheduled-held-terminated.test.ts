import assert from 'node:assert/strict';
import { reconcilePosts } from '../../src/posts/reconcile';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { countingDatabase } from '../helpers/counting-database';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { insertXAccount } from './fixtures';
import { activitiesOf, harnessActivities, startPostsHarness, type PostsHarness } from './harness';

/**
 * A post's workflow terminated by an operator while its hold waits in the worker (README "Scheduled bursts"): the hold
 * keeps running until a heartbeat after the terminate tells the worker (the SDK sends at most one per 48 s), so near
 * its instant it is still there. The reconciler starts the workflow again; the new run holds the post too. Before
 * the fix both holds asked at the instant at the same version, the old one (first to ask) took the row and sent it
 * to nobody, and the new run found it taken: `gone`, its follow-ups (first comment, media cleanup) left to sweeps, or,
 * with a send slower than the instant's 10 s report wait, a second attempt while the first was still out.
 * The lead is long enough to act during the hold in real time (a running activity stops time skipping).
 */
const LEAD_MS = 25_000;

describe('Scheduled posts: a workflow terminated during its hold and started again by the reconciler', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  // A database of its own: the look reads every user's posts (in the shared one it would start other files' workflows).
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase();
    h = await startPostsHarness({ posts: { dueLeadMs: LEAD_MS }, database });
  });
  after(async () => {
    await h?.stop();
    await database?.close();
  });

  const realSleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

  it("the terminated run's hold claims nothing: the new run's hold sends the post once and its workflow ends published", async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'held, terminated, started again', schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    await h.env.sleep(30 * 60_000 - LEAD_MS + 5_000);
    assert.deepEqual(await activitiesOf(h, postWorkflowId(id)), ['publishWhenDue']);
    // After the hold's first heartbeat (10 s in, sent at once); its next is not sent before the instant.
    await realSleep(7_000);
    await h.env.client.workflow.getHandle(postWorkflowId(id)).terminate('an operator, in the Web UI');

    const look = await reconcilePosts({ ...h.reconcilerRuntime(), now: h.now, dueLeadMs: LEAD_MS }, 'all');
    assert.ok(look.started.includes(postWorkflowId(id)), 'the reconciler started it again');
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null }, 'the new run published it (it ended `gone` when the old hold took it)');
    const row = await h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'published');
    assert.ok(row.published_at!.getTime() >= at.getTime(), 'not before its time');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'held, terminated, started again').length, 1, 'sent once');
  });

  it("a thread's likewise: the terminated run's hold claims nothing, the new run sends every part once and ends published", async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000);
    const texts = ['held thread, terminated, one', 'held thread, terminated, two'];
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: texts.map((text) => ({ text })), schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const threadId: string = res.body.data.thread_id;
    await h.env.sleep(30 * 60_000 - LEAD_MS + 5_000);
    assert.deepEqual(await activitiesOf(h, threadWorkflowId(threadId)), ['publishThreadWhenDue']);
    await realSleep(7_000);
    await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).terminate('an operator, in the Web UI');

    const look = await reconcilePosts({ ...h.reconcilerRuntime(), now: h.now, dueLeadMs: LEAD_MS }, 'all');
    assert.ok(look.started.includes(threadWorkflowId(threadId)), 'the reconciler started it again');
    const settled = await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result();
    assert.deepEqual(settled, { outcome: 'published', firstComment: null });
    const parts = await h.db.selectFrom('posts').select(['status', 'text']).where('thread_id', '=', threadId).orderBy('thread_order').execute();
    assert.deepEqual(parts.map((p) => p.status), ['published', 'published']);
    for (const text of texts) assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === text).length, 1, `${text}: sent once, live`);
  });

  it('a run that finds its post published by another run, media copies to clean, carries on with them rather than ending gone', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const copy = { media_id: '00000000-0000-4000-8000-00000000c0d1', url: 'https://media.example/a.png' };
    const { id } = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: account.id, platform: 'x', text: 'published by the old hold', status: 'published', scheduled_at: h.now(), published_at: h.now(), platform_post_id: '1', media: JSON.stringify([copy]) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const activities = harnessActivities(h);
    const claim = await activities.claimPost({ postId: id, now: h.now().getTime() });
    assert.deepEqual([claim.kind, claim.kind === 'publish' && claim.hasFirstComment], ['publish', false], 'taken on, not gone');
    const attempt = await activities.publishToPlatform({ postId: id, now: h.now().getTime() });
    assert.deepEqual(attempt.ok && [attempt.platformPostId, attempt.recorded, attempt.hasMedia, attempt.hasFirstComment], ['1', true, true, false], 'reported taken and recorded, its cleanup due');
    assert.equal(await activities.heldPostState({ postId: id }), null, 'a hold that did not get its claim leaves it to the claim too');
    assert.equal(h.standIns.x.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets' && r.body.toString('utf8').includes('old hold')).length, 0, 'nothing sent');
  });

  it('a look that restarts many lost workflows disowns their holds in one statement, each before its start', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    // Hours ahead, 6 minutes apart (one account's scheduled posts are kept 5 minutes apart).
    const at = (i: number) => new Date(h.now().getTime() + 2 * 60 * 60_000 + i * 6 * 60_000).toISOString();
    const postIds: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: `lost while waiting ${i}`, schedule_at: at(i) } });
      assert.equal(res.status, 201, res.text);
      postIds.push(res.body.data.id);
    }
    const thread = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: [{ text: 'lost thread, one' }, { text: 'lost thread, two' }], schedule_at: at(20) } });
    assert.equal(thread.status, 201, thread.text);
    const threadId: string = thread.body.data.thread_id;
    const workflowIds = [...postIds.map(postWorkflowId), threadWorkflowId(threadId)];
    for (const id of workflowIds) await h.env.client.workflow.getHandle(id).terminate('lost (a memory-only Temporal restarted, say)');
    const versions = async () => {
      const rows = await h.db.selectFrom('posts').select(['id', 'schedule_version']).where((eb) => eb.or([eb('id', 'in', postIds), eb('thread_id', '=', threadId)])).execute();
      return new Map(rows.map((row) => [row.id, row.schedule_version]));
    };
    const before = await versions();

    const statements: string[] = [];
    const counted = countingDatabase(database.url, statements);
    try {
      const look = await reconcilePosts({ ...h.reconcilerRuntime(), db: counted.db, now: h.now, dueLeadMs: LEAD_MS }, 'all');
      assert.deepEqual(workflowIds.filter((id) => !look.started.includes(id)), [], 'every lost workflow started again');
    } finally {
      await counted.close();
    }
    const bumps = statements.filter((text) => /^update "posts" set "schedule_version"/.test(text));
    assert.equal(bumps.length, 1, `one statement disowns the holds of 21 lost workflows (22 rows): ${bumps.length}`);
    const after = await versions();
    assert.equal(after.size, 22);
    for (const [id, version] of after) assert.equal(version, before.get(id)! + 1, `${id}: moved to a new version`);
    for (const id of workflowIds) assert.equal((await h.env.client.workflow.getHandle(id).describe()).status.name, 'RUNNING');
    for (const id of workflowIds) await h.env.client.workflow.getHandle(id).terminate('test over');
  });
});
