import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logger';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { registerSearchAttributes } from '../../src/temporal/search-attributes';
import { giveSearchAttributesToRunning } from '../../src/temporal/search-attributes-backfill';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { insertXAccount } from './fixtures';
import { startPostsHarness, workflowBundle, type PostsHarness } from './harness';

/**
 * Workflows started while the search attributes' registration was refused carry none; once it succeeds, the running
 * ones are given them (`giveSearchAttributesToRunning`, the `searchAttributesRegistered` signal), so the Web UI and
 * `herald posts stuck` find them by `PostId` and `ThreadId` (README "Temporal Web UI", 2026-12-07 evening).
 */
describe('search attributes given to workflows started without them', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness();
  });
  after(async () => {
    // Leave the module's switch on, as a successful registration does.
    (await registerSearchAttributes(h.env.client, h.env.namespace ?? 'default', createLogger('silent')).catch(() => undefined))?.stop();
    await h?.stop();
  });

  const searched = async (workflowId: string) => (await h.env.client.workflow.getHandle(workflowId).describe()).searchAttributes;
  const found = async (query: string) => {
    const ids: string[] = [];
    for await (const execution of h.env.client.workflow.list({ query })) ids.push(execution.workflowId);
    return ids;
  };

  it('a scheduled post and a scheduled thread started while registration was refused get them once it succeeds, and still publish', async () => {
    // Registration refused (a namespace that is not there): workflows start without attributes.
    const refused = await registerSearchAttributes(new Client({ connection: h.env.client.connection, namespace: 'not-there' }), 'not-there', createLogger('silent'), { firstMs: 60_000, maxMs: 60_000 });
    refused.stop();
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 30 * 60_000).toISOString();
    const threadAt = new Date(h.now().getTime() + 40 * 60_000).toISOString();
    const post = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'found by its id later', schedule_at: at } });
    assert.equal(post.status, 201, post.text);
    const thread = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: [{ text: 'found thread, one' }, { text: 'found thread, two' }], schedule_at: threadAt } });
    assert.equal(thread.status, 201, thread.text);
    const postId: string = post.body.data.id;
    const threadId: string = thread.body.data.thread_id;
    assert.equal((await searched(postWorkflowId(postId))).PostId, undefined, 'started without them');
    assert.equal((await searched(threadWorkflowId(threadId))).ThreadId, undefined, 'started without them');

    // The registration succeeds: the running workflows without them are signalled.
    let backfill: ReturnType<typeof giveSearchAttributesToRunning> | undefined;
    const registered = await registerSearchAttributes(h.env.client, h.env.namespace ?? 'default', createLogger('silent'), undefined, () =>
      (backfill = giveSearchAttributesToRunning(h.env.client, h.db, createLogger('silent'))),
    );
    registered.stop();
    assert.ok(backfill, 'the registration ran the backfill');
    const result = await backfill;
    assert.equal(result.failed, 0);
    assert.ok(result.signalled >= 2, `signalled ${result.signalled}`);

    const until = Date.now() + 10_000;
    while ((await searched(threadWorkflowId(threadId))).ThreadId === undefined && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const postAttributes = await searched(postWorkflowId(postId));
    assert.deepEqual(postAttributes.PostId, [postId]);
    assert.deepEqual(postAttributes.UserId, [h.api.userId]);
    assert.deepEqual(postAttributes.Platform, ['x']);
    const threadAttributes = await searched(threadWorkflowId(threadId));
    assert.deepEqual(threadAttributes.ThreadId, [threadId]);
    assert.equal((threadAttributes.PostId as string[]).length, 2);
    assert.deepEqual(await found(`PostId = '${postId}'`), [postWorkflowId(postId)], 'the Web UI query finds the post');
    assert.deepEqual(await found(`ThreadId = '${threadId}'`), [threadWorkflowId(threadId)], 'and the thread');
    assert.deepEqual((await giveSearchAttributesToRunning(h.env.client, h.db, createLogger('silent'))).listed, 0, 'none left without them');

    // They still publish, each once, and their histories (signal, marker, upsert) replay with the current code.
    assert.equal(((await h.settle(postId)) as { outcome: string }).outcome, 'published');
    assert.deepEqual(await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result(), { outcome: 'published', firstComment: null });
    assert.equal(h.standIns.x.liveTweets().filter((t) => t.text === 'found by its id later').length, 1);
    for (const workflowId of [postWorkflowId(postId), threadWorkflowId(threadId)]) {
      const history = await h.env.client.workflow.getHandle(workflowId).fetchHistory();
      assert.ok(history.events?.some((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.PostId), `${workflowId}: upserted`);
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
    }
  });
});
