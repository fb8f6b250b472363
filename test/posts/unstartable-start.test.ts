import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { unstartableSentence } from '../../src/posts/await-settled';
import { answerMadePosts, createPosts, type MadePosts } from '../../src/posts/create';
import { createPostsRuntime, type PostsRuntime } from '../../src/posts/runtime';
import type { CreatePostBody, CreateThreadBody } from '../../src/posts/rules';
import { usageFor } from '../../src/quota/quota';
import { answerMadeThreads, createThreads, type MadeThreads } from '../../src/threads/create';
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
  let x2: AccountRow;
  let rt: PostsRuntime;
  /** Refuses only the starts of `x`'s posts and threads (a fan-out's other accounts start). */
  let rtRefusingX: PostsRuntime;
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
    x2 = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const accountOf = async (arg: { postId?: string; threadId?: string }) =>
      (await h.db.selectFrom('posts').select('account_id').where(arg.postId ? 'id' : 'thread_id', '=', (arg.postId ?? arg.threadId)!).executeTakeFirst())?.account_id;
    const refusingX = new Client({
      connection: h.env.connection,
      namespace: h.env.namespace,
      interceptors: {
        workflow: [
          {
            start: async (input, next) =>
              (await accountOf(input.options.args[0] as { postId?: string; threadId?: string })) === x.id ? next({ ...input, options: { ...input.options, searchAttributes: { CustomKeywordField: tooLong } } }) : next(input),
          },
        ],
      },
    });
    rtRefusingX = createPostsRuntime({ config: testConfig(), db: h.db, logger, temporal: refusingX }, { taskQueue: h.taskQueue, adapters: h.standIns.adapters, sealedBox: testSealedBox });
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
      let first: Error | undefined;
      await assert.rejects(createPosts(rt, h.api.userId, body), (err: Error) => ((first = err), isInternalError(err)));
      const rows = await rowsOf(text);
      // A retry taking over after a crash answers from the rows (`answerMadePosts`) what the first said: the 500.
      const made: MadePosts = { created: [{ id: rows[0]!.id, account: { id: x.id, platform: 'x' } }], fan_out: false, group_id: null, draft: false, warnings: [] };
      await assert.rejects(answerMadePosts(rt, made), (err: Error & { code?: string }) => err.code === 'internal_error' && err.message === first?.message);
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
    // A retry taking over after a crash answers from the rows (`answerMadeThreads`) what the first said: the 500.
    const threadId = (await h.db.selectFrom('posts').select('thread_id').where('id', '=', rows[0]!.id).executeTakeFirstOrThrow()).thread_id!;
    const made: MadeThreads = { created: [{ threadId, userId: h.api.userId, account: { id: x.id, platform: 'x' }, postIds: rows.map((r) => r.id) }], fan_out: false, group_id: null, draft: false, warnings: [] };
    await assert.rejects(answerMadeThreads(rt, made), (err: Error) => isInternalError(err) && /kept as failed/.test(err.message) && rows.every((r) => err.message.includes(r.id)));
    assert.ok(await allRefunded(rows.map((r) => r.id)), 'every reservation refunded');
    const after = await usageFor(h.db, h.api.userId, h.now());
    assert.deepEqual({ posts: after.posts, scheduled: after.scheduled }, { posts: before.posts, scheduled: before.scheduled });
    const events = await failedEvents('thread.failed');
    assert.equal(events.length, 1);
    // decisions.md: thread.failed "with thread_rollback": nothing went out, as the immediate thread's says (it was null).
    assert.deepEqual((events[0]!.data as { thread_rollback: unknown }).thread_rollback, {
      platform: 'x',
      published: 0,
      rolled_back: [],
      still_live: [],
      rollback_supported: true,
      quota_refunded: true,
    });
  });

  it('an immediate thread: 500 saying nothing of it was kept, no rows kept (as any thread failing at once), the quota returned, thread.failed written', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const eventsBefore = (await failedEvents('thread.failed')).length;
    const body = { account_id: x.id, posts: [{ text: 'refused now 1' }, { text: 'refused now 2' }] } as CreateThreadBody;
    await assert.rejects(createThreads(rt, h.api.userId, body), (err: Error & { code?: string; status?: number }) => isInternalError(err) && /nothing of it was kept/.test(err.message) && !/kept as failed/.test(err.message));
    assert.deepEqual(await rowsOf('refused now'), [], 'no rows kept (publishing-api.md "States and transitions" rule 2)');
    const after = await usageFor(h.db, h.api.userId, h.now());
    assert.deepEqual({ posts: after.posts, scheduled: after.scheduled }, { posts: before.posts, scheduled: before.scheduled });
    const events = await failedEvents('thread.failed');
    assert.equal(events.length, eventsBefore + 1);
    const data = events
      .map((e) => e.data as { posts?: Array<{ text: string; status: string; error_message: string }>; thread_rollback?: { published: number; still_live: unknown[] } })
      .find((d) => d.posts?.[0]?.text === 'refused now 1');
    assert.deepEqual(data?.posts?.map((p) => [p.status, p.error_message]), [['failed', unstartableSentence], ['failed', unstartableSentence]]);
    assert.deepEqual([data?.thread_rollback?.published, data?.thread_rollback?.still_live], [0, []]);
  });

  it('a scheduled fan-out whose second start is refused: 207-shaped results naming each post as it is (one scheduled and carrying on, one failed and refunded), not a 500', async () => {
    const at = new Date(Date.now() + 3 * 3_600_000).toISOString();
    const outcome = await createPosts(rtRefusingX, h.api.userId, { account_ids: [x2.id, x.id], text: 'fan-out partly refused', schedule_at: at } as CreatePostBody);
    assert.equal(outcome.kind, 'fan_out');
    if (outcome.kind !== 'fan_out') return;
    const [started, refused] = outcome.results;
    assert.deepEqual([started!.account_id, started!.success, started!.status, started!.error], [x2.id, true, 'scheduled', null]);
    assert.deepEqual([refused!.account_id, refused!.success, refused!.status, refused!.error], [x.id, false, 'failed', { code: 'internal_error', message: unstartableSentence }]);
    const description = await h.env.client.workflow.getHandle(`post-${started!.post_id}`).describe();
    assert.equal(description.status.name, 'RUNNING', 'the started post waits for its time');
    assert.ok(await allRefunded([refused!.post_id]), 'the refused post refunded');
    const kept = await h.db.selectFrom('quota_reservations').select('state').where('post_id', '=', started!.post_id).execute();
    assert.ok(kept.length > 0 && kept.every((r) => r.state === 'reserved'), 'the started post keeps its quota');
    // A retry taking over after a crash answers from the rows (`answerMadePosts`) what the first said, Herald's internal_error.
    const made: MadePosts = { created: outcome.results.map((r) => ({ id: r.post_id, account: { id: r.account_id, platform: 'x' } })), fan_out: true, group_id: outcome.groupId, draft: false, warnings: [] };
    assert.deepEqual(await answerMadePosts(rtRefusingX, made), outcome);
    await h.env.client.workflow.getHandle(`post-${started!.post_id}`).terminate('test done');
  });

  it('a scheduled fan-out whose every start is refused: 500 naming every post kept failed', async () => {
    const at = new Date(Date.now() + 4 * 3_600_000).toISOString();
    await assert.rejects(createPosts(rt, h.api.userId, { account_ids: [x2.id, x.id], text: 'fan-out all refused', schedule_at: at } as CreatePostBody), (err: Error & { code?: string; status?: number }) => {
      return isInternalError(err) && /kept as failed/.test(err.message);
    });
    const rows = await rowsOf('fan-out all refused');
    assert.deepEqual(rows.map((r) => r.status), ['failed', 'failed']);
  });

  it('an immediate thread fan-out whose second start is refused: the started thread publishes and is answered so, the refused one is a failed result with nothing kept', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const body = { account_ids: [x2.id, x.id], posts: [{ text: 'fan thread part 1' }, { text: 'fan thread part 2' }] } as CreateThreadBody;
    const outcome = await createThreads(rtRefusingX, h.api.userId, body);
    assert.equal(outcome.kind, 'fan_out');
    if (outcome.kind !== 'fan_out') return;
    const [published, refused] = outcome.results;
    assert.deepEqual([published!.account_id, published!.success, published!.posts?.map((p) => p.status)], [x2.id, true, ['published', 'published']]);
    assert.deepEqual([refused!.account_id, refused!.success, refused!.thread_id, refused!.posts, refused!.error?.code], [x.id, false, null, null, 'internal_error']);
    assert.match(String(refused!.error?.message), /nothing of it was kept/);
    const rows = await h.db.selectFrom('posts').select(['account_id', 'status']).where('text', 'like', 'fan thread part%').execute();
    assert.deepEqual(rows.map((r) => [r.account_id, r.status]), [[x2.id, 'published'], [x2.id, 'published']], 'the refused thread keeps no rows');
    const after = await usageFor(h.db, h.api.userId, h.now());
    assert.equal(after.posts, before.posts + 2, 'only the published thread is charged');
    assert.deepEqual(h.standIns.x.tweets().filter((t) => t.text.startsWith('fan thread part')).map((t) => t.text), ['fan thread part 1', 'fan thread part 2'], 'sent once, by the started thread');
    // A retry taking over after a crash answers from the rows and the refused thread's event (`answerMadeThreads`) what the first said.
    const discarded = (await failedEvents('thread.failed'))
      .map((e) => e.data as { thread_id: string; account_id?: string; posts: Array<{ id: string; text: string }> })
      .find((d) => d.posts[0]?.text === 'fan thread part 1');
    assert.ok(discarded, 'the refused thread\'s thread.failed');
    const made: MadeThreads = {
      created: [
        { threadId: published!.thread_id!, userId: h.api.userId, account: { id: x2.id, platform: 'x' }, postIds: published!.posts!.map((p) => p.id) },
        { threadId: discarded.thread_id, userId: h.api.userId, account: { id: x.id, platform: 'x' }, postIds: discarded.posts.map((p) => p.id) },
      ],
      fan_out: true,
      group_id: outcome.groupId,
      draft: false,
      warnings: [],
    };
    assert.deepEqual(await answerMadeThreads(rtRefusingX, made), outcome);
  });
});
