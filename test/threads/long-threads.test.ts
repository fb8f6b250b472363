import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_LIMITS } from '../../temporal-dev/limits';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { startReconciler } from '../../src/posts/reconcile';
import { createPostsRuntime } from '../../src/posts/runtime';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { searchAttributesOf, type SearchedPost } from '../../src/temporal/search-attributes';
import { webUiPostLink } from '../../src/temporal/web-ui';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { testConfig } from '../helpers/api';
import { insertXAccount, testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * Threads of any length start on a cluster with Temporal's default search-attribute limits (temporal-dev enforces
 * them as the real server does): a workflow's PostId lists only what fits one value (2 KiB, 52 uuids), a thread is
 * found by its ThreadId. Until 2026-12-07 a thread of 53 parts or more was refused at every start, its request
 * answered `publishing`/`scheduled` with its quota taken, and the reconciler asked again every minute for ever.
 */
describe('Long threads and Temporal search-attribute limits', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());

  const parts = (prefix: string) => Array.from({ length: 60 }, (_, i) => ({ text: `${prefix} part ${i + 1}` }));
  const postIdsOf = async (threadId: string) => (await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).describe()).searchAttributes;
  const found = async (query: string) => {
    const ids: string[] = [];
    for await (const execution of h.env.client.workflow.list({ query })) ids.push(execution.workflowId);
    return ids;
  };

  it('publishes a 60-part immediate thread; its workflow lists the first 52 parts in PostId and is found by ThreadId', async () => {
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: parts('immediate') } });
    assert.equal(res.status, 201, res.text);
    const { thread_id, posts } = res.body.data;
    assert.equal(posts.length, 60);
    assert.deepEqual(new Set(posts.map((p: any) => p.status)), new Set(['published']));
    const live = h.standIns.x.liveTweets().filter((t) => t.text.startsWith('immediate part '));
    assert.equal(live.length, 60);

    const attributes = await postIdsOf(thread_id);
    assert.deepEqual(attributes.PostId, posts.slice(0, 52).map((p: any) => p.id), 'the first 52 parts, in their order');
    assert.deepEqual(attributes.ThreadId, [thread_id]);
    assert.deepEqual(await found(`ThreadId = '${thread_id}'`), [threadWorkflowId(thread_id)]);
    assert.deepEqual(await found(`PostId = '${posts[0].id}'`), [threadWorkflowId(thread_id)]);
    // The 60th part is not in PostId: the Web UI link of a thread part filters on its thread.
    assert.deepEqual(await found(`PostId = '${posts[59].id}'`), []);
    assert.equal(
      webUiPostLink('http://ui', 'default', posts[59]),
      `http://ui/namespaces/default/workflows?query=${encodeURIComponent(`ThreadId = '${thread_id}'`)}`,
    );
  });

  it('publishes a 60-part scheduled thread at its time', async () => {
    await h.syncClock();
    const at = new Date(h.now().getTime() + 60 * 60_000);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: parts('scheduled'), schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const { thread_id, posts } = res.body.data;
    assert.deepEqual(new Set(posts.map((p: any) => p.status)), new Set(['scheduled']));
    assert.deepEqual((await postIdsOf(thread_id)).PostId, posts.slice(0, 52).map((p: any) => p.id));
    assert.deepEqual(await h.env.client.workflow.getHandle(threadWorkflowId(thread_id)).result(), { outcome: 'published', firstComment: null });
    const rows = await h.db.selectFrom('posts').select('status').where('thread_id', '=', thread_id).execute();
    assert.equal(rows.length, 60);
    assert.deepEqual(new Set(rows.map((r) => r.status)), new Set(['published']));
  });

  it("keeps every list within one value's limit: a 25-account fan-out lists all its posts, a thread its first parts", () => {
    const uuid = (i: number) => `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const platforms = ['x', 'bluesky', 'linkedin', 'threads', 'mastodon', 'instagram', 'facebook', 'telegram'];
    const group: SearchedPost[] = Array.from({ length: 25 }, (_, i) => ({ id: uuid(24 - i), user_id: uuid(900), platform: platforms[i % 8]!, group_id: uuid(901) }));
    const value = (pairs: ReturnType<typeof searchAttributesOf>, name: string) => pairs.find((p) => p.key.name === name)?.value as string[];
    const ofGroup = searchAttributesOf(group);
    assert.deepEqual(value(ofGroup, 'PostId'), group.map((p) => p.id).sort());
    assert.deepEqual(value(ofGroup, 'Platform').sort(), [...platforms].sort());
    const thread: SearchedPost[] = Array.from({ length: 200 }, (_, i) => ({ id: uuid(1000 - i), user_id: uuid(900), platform: 'x', thread_id: uuid(902), thread_order: i + 1 }));
    const listed = value(searchAttributesOf(thread), 'PostId');
    assert.deepEqual(listed, thread.slice(0, 52).map((p) => p.id));
    assert.ok(Buffer.byteLength(JSON.stringify(listed)) <= SEARCH_ATTRIBUTE_LIMITS.valueBytes);
    assert.ok(Buffer.byteLength(JSON.stringify([...listed, uuid(0)])) > SEARCH_ATTRIBUTE_LIMITS.valueBytes, 'as many as fit');
  });

  it('the reconciler asks once for a start Temporal refuses as invalid, logs it naming the posts, and does not ask again every minute', async () => {
    const orphan = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: 'refused by Temporal', status: 'scheduled', scheduled_at: new Date(Date.now() - 5 * 60_000) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const workflowId = postWorkflowId(orphan.id);
    // A real refusal by the server: every start through this client carries a value beyond the 2 KiB limit.
    const starts: string[] = [];
    const tooLong = Array.from({ length: 60 }, (_, i) => `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`);
    const refusing = new Client({
      connection: h.env.connection,
      namespace: h.env.namespace,
      interceptors: {
        workflow: [
          {
            start: async (input, next) => {
              starts.push(input.options.workflowId);
              return next({ ...input, options: { ...input.options, searchAttributes: { CustomKeywordField: tooLong } } });
            },
          },
        ],
      },
    });
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
    const rt = createPostsRuntime({ config: testConfig(), db: h.db, logger, temporal: refusing }, { taskQueue: h.taskQueue, adapters: h.standIns.adapters, sealedBox: testSealedBox });
    const reconciler = startReconciler(rt, 100);
    try {
      const first = await reconciler.first;
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // a dozen periodic looks, the post overdue in each
      assert.deepEqual(starts.filter((id) => id === workflowId), [workflowId], 'asked once');
      assert.ok(first.refused.includes(workflowId), 'refused, not failed');
      // Scoped to this post: the first look reads the whole shared test database, where another file's row may fail.
      const entries = lines.map((line) => JSON.parse(line));
      const failedHere = entries.filter((entry) => entry.refusal === undefined && (entry.workflowId === workflowId || entry.workflowIds?.includes(workflowId)));
      assert.deepEqual(failedHere, [], `a refusal does not widen the next look (the look's failures: ${first.failed}; ${lines.join('')})`);
      const logged = entries.filter((entry) => entry.workflowId === workflowId);
      assert.equal(logged.length, 1);
      assert.equal(logged[0].level, 'error');
      assert.deepEqual(logged[0].postIds, [orphan.id]);
      assert.match(logged[0].refusal, /search attribute CustomKeywordField value size \d+ exceeds size limit 2048/);
    } finally {
      await reconciler.stop();
      await h.db.deleteFrom('posts').where('id', '=', orphan.id).execute();
    }
  });
});
