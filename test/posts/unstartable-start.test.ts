import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { unstartableSentence } from '../../src/posts/await-settled';
import { createPosts } from '../../src/posts/create';
import { createPostsRuntime, type PostsRuntime } from '../../src/posts/runtime';
import type { CreatePostBody, CreateThreadBody } from '../../src/posts/rules';
import { usageFor } from '../../src/quota/quota';
import { createThreads } from '../../src/threads/create';
import { testConfig } from '../helpers/api';
import { insertXAccount, testSealedBox } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * The API's own workflow start refused by Temporal as invalid (INVALID_ARGUMENT: search attributes the cluster does
 * not accept): the reconciler never asks again for such a start, so the posts are failed with a sentence and their
 * quota returned, and the request answers 500 `internal_error` naming them. Before, the request answered as if the
 * start had gone through (the rows `scheduled`/`publishing`, the quota taken), logged "the reconciler will", and the
 * posts waited for ever.
 */
describe('a post whose workflow Temporal refuses to start', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;
  let rt: PostsRuntime;
  const lines: string[] = [];

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    // A real refusal by the server: every start through this client carries a value beyond the 2 KiB limit.
    const tooLong = Array.from({ length: 60 }, (_, i) => `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`);
    const refusing = new Client({
      connection: h.env.connection,
      namespace: h.env.namespace,
      interceptors: { workflow: [{ start: async (input, next) => next({ ...input, options: { ...input.options, searchAttributes: { CustomKeywordField: tooLong } } }) }] },
    });
    const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
    rt = createPostsRuntime({ config: testConfig(), db: h.db, logger, temporal: refusing }, { taskQueue: h.taskQueue, adapters: h.standIns.adapters, sealedBox: testSealedBox });
  });
  after(async () => h?.stop());

  const isInternalError = (err: Error & { code?: string; status?: number }) => err.code === 'internal_error' && err.status === 500 && /nothing was published and no quota was used/.test(err.message);
  const rowsOf = (text: string) => h.db.selectFrom('posts').select(['id', 'status', 'error_message', 'first_comment_status', 'retry_count']).where('text', 'like', `${text}%`).orderBy('thread_order').execute();
  const allRefunded = async (ids: string[]) => {
    const states = (await h.db.selectFrom('quota_reservations').select('state').where('post_id', 'in', ids).execute()).map((r) => r.state);
    return states.length > 0 && states.every((state) => state === 'refunded');
  };
  const failedEvents = (type: 'post.failed' | 'thread.failed') => h.db.selectFrom('events').select('data').where('user_id', '=', h.api.userId).where('type', '=', type).execute();

  for (const scheduled of [false, true]) {
    it(`${scheduled ? 'a scheduled' : 'an immediate'} post: 500, the row failed with the sentence, its quota returned, no "reconciler will"`, async () => {
      const text = `refused ${scheduled ? 'scheduled' : 'immediate'}`;
      const before = await usageFor(h.db, h.api.userId, h.now());
      const body = { account_id: x.id, text, first_comment: 'a comment', ...(scheduled ? { schedule_at: new Date(Date.now() + 3_600_000).toISOString() } : {}) } as CreatePostBody;
      lines.length = 0;
      await assert.rejects(createPosts(rt, h.api.userId, body), isInternalError);
      const rows = await rowsOf(text);
      assert.equal(rows.length, 1);
      assert.deepEqual(
        { status: rows[0]!.status, error_message: rows[0]!.error_message, first_comment_status: rows[0]!.first_comment_status, retry_count: rows[0]!.retry_count },
        { status: 'failed', error_message: unstartableSentence, first_comment_status: 'failed', retry_count: 0 },
      );
      assert.ok(await allRefunded([rows[0]!.id]), 'every reservation refunded');
      const after = await usageFor(h.db, h.api.userId, h.now());
      assert.deepEqual({ posts: after.posts, scheduled: after.scheduled }, { posts: before.posts, scheduled: before.scheduled });
      assert.ok((await failedEvents('post.failed')).some((e) => (e.data as { id?: string }).id === rows[0]!.id), 'post.failed written');
      assert.ok(!lines.some((line) => /reconciler will/.test(line)), lines.join('\n'));
      assert.ok(lines.some((line) => /refused to start the workflow of these posts as invalid/.test(line) && line.includes(rows[0]!.id)), lines.join('\n'));
    });
  }

  it('a scheduled thread: 500, every part failed with the sentence, the quota returned, thread.failed written', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const body = { account_id: x.id, schedule_at: new Date(Date.now() + 7_200_000).toISOString(), posts: [{ text: 'refused thread 1' }, { text: 'refused thread 2' }] } as CreateThreadBody;
    await assert.rejects(createThreads(rt, h.api.userId, body), isInternalError);
    const rows = await rowsOf('refused thread');
    assert.deepEqual(rows.map((r) => [r.status, r.error_message]), [['failed', unstartableSentence], ['failed', unstartableSentence]]);
    assert.ok(await allRefunded(rows.map((r) => r.id)), 'every reservation refunded');
    const after = await usageFor(h.db, h.api.userId, h.now());
    assert.deepEqual({ posts: after.posts, scheduled: after.scheduled }, { posts: before.posts, scheduled: before.scheduled });
    assert.equal((await failedEvents('thread.failed')).length, 1);
  });
});
