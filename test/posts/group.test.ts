import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { AccountRow } from '../../src/db/tables/accounts';
import { reconcilePosts } from '../../src/posts/reconcile';
import { groupWorkflowId, postWorkflowId } from '../../src/posts/workflow-client';
import { insertMastodonAccount, insertThreadsAccount, insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/** An immediate fan-out is published by one `publishGroup` workflow; scheduled fan-outs keep one workflow per post. */
describe('Fan-out: one workflow for an immediate group', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let x: AccountRow;
  let m: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    m = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const describeWorkflow = async (workflowId: string) => {
    try {
      return (await h.env.client.workflow.getHandle(workflowId).describe()).type;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'missing';
      throw err;
    }
  };

  it('publishes every account of an immediate fan-out in one group workflow, recorded on the rows', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'together' } });
    assert.equal(res.status, 201, res.text);
    const { group_id, results } = res.body.data;
    const rows = await h.db.selectFrom('posts').select(['id', 'workflow_id', 'status']).where('group_id', '=', group_id).execute();
    assert.deepEqual(new Set(rows.map((r) => r.workflow_id)), new Set([groupWorkflowId(group_id)]));
    assert.equal(await describeWorkflow(groupWorkflowId(group_id)), 'publishGroup');
    assert.equal(await describeWorkflow(postWorkflowId(results[0].post_id)), 'missing');
    const outcome = await h.env.client.workflow.getHandle(groupWorkflowId(group_id)).result();
    assert.deepEqual(outcome, Object.fromEntries(results.map((r: any) => [r.post_id, { outcome: 'published', firstComment: null }])));
  });

  it('retries one account\'s transient fault inside the group while the others are done', async () => {
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reply', response: { status: 503, json: { title: 'Service Unavailable' } } }, 1);
    const pending = h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'one stumbles' } });
    const res = await pending;
    assert.equal(res.status, 201, res.text);
    const byPlatform = Object.fromEntries(res.body.data.results.map((r: any) => [r.platform, [r.status, r.post.retry_count]]));
    assert.deepEqual(byPlatform, { x: ['published', 1], mastodon: ['published', 0] });
  });

  it('a scheduled fan-out keeps one workflow per post', async () => {
    await h.syncClock();
    const at = new Date(h.now().getTime() + 3 * 3_600_000).toISOString();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'later, apart', schedule_at: at } });
    assert.equal(res.status, 201, res.text);
    for (const r of res.body.data.results) {
      assert.equal(await describeWorkflow(postWorkflowId(r.post_id)), 'publishPost');
      const row = await h.db.selectFrom('posts').select('workflow_id').where('id', '=', r.post_id).executeTakeFirstOrThrow();
      assert.equal(row.workflow_id, null);
      assert.equal((await h.api.request('DELETE', `/api/v1/posts/${r.post_id}`)).status, 200);
    }
  });

  it('the reconciler restarts a lost group with its posts still publishing; a post already live is not sent twice', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'lost group' } });
    assert.equal(res.status, 201, res.text);
    const { group_id, results } = res.body.data;
    await h.env.client.workflow.getHandle(groupWorkflowId(group_id)).result();
    // As if the process stopped mid-group (memory-only Temporal forgets it): x's post went out but was not recorded,
    // mastodon's was never sent.
    const [xPost, mPost] = results.map((r: any) => r.post_id);
    await h.db.updateTable('posts').set({ status: 'publishing', platform_post_id: null, publish_attempt_started_at: new Date() }).where('id', '=', xPost).execute();
    await h.db.updateTable('posts').set({ status: 'publishing', platform_post_id: null, publish_attempt_started_at: null }).where('id', '=', mPost).execute();
    await h.env.client.workflow.getHandle(groupWorkflowId(group_id)).terminate('simulated loss').catch(() => undefined);
    const statusesBefore = h.standIns.mastodon.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/statuses').length;

    const rt = h.reconcilerRuntime();
    // The database is shared with other suites: count only what this group got.
    await reconcilePosts(rt);
    assert.equal(await describeWorkflow(postWorkflowId(xPost)), 'missing', 'no workflow of its own');
    assert.equal(await describeWorkflow(postWorkflowId(mPost)), 'missing', 'no workflow of its own');
    const restarted = await h.env.client.workflow.getHandle(groupWorkflowId(group_id)).describe();
    assert.equal(restarted.status.name === 'TERMINATED', false, 'a new run of the group workflow');
    assert.deepEqual(await h.settle(xPost), { outcome: 'published', firstComment: null });
    assert.deepEqual(await h.settle(mPost), { outcome: 'published', firstComment: null });
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'lost group').length, 1, 'x was looked up, not sent again');
    const statusesAfter = h.standIns.mastodon.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/statuses').length;
    assert.equal(statusesAfter - statusesBefore, 1);
  });

  it('first comments go out under each published post of the group, on x and on threads', async () => {
    const threads = h.standIns.threads;
    const t = await insertThreadsAccount(h.db, h.api.userId, threads);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, t.id], text: 'with comments', first_comment: 'see below' } });
    assert.equal(res.status, 201, res.text);
    const [onX, onThreads] = res.body.data.results;
    assert.deepEqual([onX.post.first_comment.status, onThreads.post.first_comment.status], ['posted', 'posted']);
    const tweet = h.standIns.x.tweets().find((tw) => tw.text === 'see below');
    assert.deepEqual(tweet?.referenced_tweets, [{ type: 'replied_to', id: onX.post.platform_post_id }]);
    const reply = [...threads.posts.values()].find((p) => p.text === 'see below');
    assert.equal(reply?.replyToId, onThreads.post.platform_post_id);
  });
});
