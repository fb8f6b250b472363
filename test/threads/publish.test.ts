import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { threadOutcome } from '../../src/threads/respond';
import type { AccountRow } from '../../src/db/tables/accounts';
import { usageFor } from '../../src/quota/quota';
import { insertAccount, insertXAccount, xAnswers, refusalsTakenAsReal } from '../posts/fixtures';
import { activitiesOf, startPostsHarness, type PostsHarness } from '../posts/harness';
import { threadWorkflowId } from '../../src/threads/workflow-client';

/**
 * POST /api/v1/threads, immediate, one account, against the X stand-in: the reply chain, the first comment under the
 * last part, and the rollback (compensation) at every failing position, complete or not.
 */
describe('POST /api/v1/threads: immediate publication and rollback', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const url = (id: string) => `https://x.com/${x.username}/status/${id}`;
  const tweetByText = (text: string) => h.standIns.x.tweets().find((t) => t.text === text);
  const threadRows = (texts: string[]) => h.db.selectFrom('posts').selectAll().where('text', 'in', texts).execute();

  /** The `position`-th create (1-based) from now on is refused by X with a 403; the ones before go through. */
  function refuseCreateAt(position: number) {
    const tweets = { method: 'POST', path: '/2/tweets' };
    if (position > 1) h.standIns.x.standIn.inject(tweets, { kind: 'delay', ms: 0 }, position - 1);
    h.standIns.x.standIn.inject(tweets, {
      kind: 'reply',
      response: { status: 403, headers: { 'content-type': 'application/json' }, json: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 } },
    });
  }

  it('publishes the parts as a reply chain in order, the first comment under the last part, and answers 201 with the thread', async () => {
    const texts = ['chain one', 'chain two', 'chain three'];
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: texts.map((text) => ({ text })), first_comment: 'chain comment' },
    });
    assert.equal(res.status, 201, res.text);
    const [t1, t2, t3] = texts.map((t) => tweetByText(t)!);
    assert.ok(t1 && t2 && t3);
    assert.equal(t1.referenced_tweets, undefined);
    assert.deepEqual(t2.referenced_tweets, [{ type: 'replied_to', id: t1.id }]);
    assert.deepEqual(t3.referenced_tweets, [{ type: 'replied_to', id: t2.id }]);
    const comment = tweetByText('chain comment')!;
    assert.deepEqual(comment.referenced_tweets, [{ type: 'replied_to', id: t3.id }]);

    const { thread_id, posts } = res.body.data;
    assert.deepEqual(Object.keys(res.body.data).sort(), ['posts', 'thread_id']);
    assert.equal(posts.length, 3);
    posts.forEach((post: any, i: number) => {
      const tweet = [t1, t2, t3][i]!;
      assert.deepEqual(post, {
        id: post.id,
        platform: 'x',
        account_id: x.id,
        text: texts[i],
        media_urls: null,
        first_comment:
          i === 2
            ? { text: 'chain comment', status: 'posted', comment_id: post.first_comment.comment_id, error: null }
            : null,
        platform_post_id: tweet.id,
        platform_post_url: url(tweet.id),
        status: 'published',
        scheduled_at: null,
        published_at: post.published_at,
        thread_id,
        thread_order: i + 1,
        group_id: null,
        error_message: null,
        retry_count: 0,
        created_at: post.created_at,
        hidden: false,
      });
    });
    // The request waits: the parts went out from one local activity, which recorded them; nothing went through the task queue.
    const workflowId = threadWorkflowId(thread_id);
    await h.env.client.workflow.getHandle(workflowId).result();
    assert.deepEqual(await activitiesOf(h, workflowId), ['publishThreadNow', 'publishFirstComment']);
    const history = await h.env.client.workflow.getHandle(workflowId).fetchHistory();
    assert.equal(history.events!.filter((e) => e.activityTaskScheduledEventAttributes).length, 0);
  });

  for (const [position, label] of [[1, 'the first part'], [2, 'a middle part'], [3, 'the last part']] as const) {
    it(`a refusal of ${label}: every published part deleted in reverse order, no rows, quota back, 502 upstream_error`, async () => {
      const before = await usageFor(h.db, h.api.userId, h.now());
      const texts = [1, 2, 3].map((n) => `refused at ${position}, part ${n}`);
      const deletesBefore = h.standIns.x.standIn.calls('DELETE').length;
      refuseCreateAt(position);
      const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: texts.map((text) => ({ text })), first_comment: 'never sent' } });
      assert.equal(res.status, 502, res.text);
      const published = texts.slice(0, position - 1).map((t) => tweetByText(t)!);
      const deletes = h.standIns.x.standIn.calls('DELETE').slice(deletesBefore).map((r) => r.path);
      assert.deepEqual(deletes, [...published].reverse().map((t) => `/2/tweets/${t.id}`), 'deleted last-published first');
      assert.equal(h.standIns.x.liveTweets().filter((t) => texts.includes(t.text)).length, 0);
      const sentence = res.body.error.message.split(' (part ')[0];
      assert.deepEqual(res.body, {
        error: {
          code: 'upstream_error',
          message:
            position === 1
              ? `${sentence} (part 1 of 3). Nothing was published.`
              : `${sentence} (part ${position} of 3). The ${position - 1} published part${position === 2 ? ' was' : 's were'} deleted again.`,
          thread_rollback: { platform: 'x', published: position - 1, rolled_back: [...published].reverse().map((t) => t.id), still_live: [], rollback_supported: true, quota_refunded: true },
        },
      });
      assert.match(sentence, /^X /);
      assert.deepEqual(await threadRows(texts), []);
      assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    });
  }

  it('a platform without a reply chain (telegram) publishes each part standalone, and rolls them back the same way', async () => {
    const token = '7000001:telegram-thread-token';
    const bot = h.standIns.telegram.addBot(token);
    const chat = h.standIns.telegram.addChat({ username: 'heraldthreads' });
    const telegram = await insertAccount(h.db, h.api.userId, {
      platform: 'telegram',
      platform_account_id: String(chat.id),
      username: 'heraldthreads',
      credentials: { bot_token: token },
      settings: { chat_id: String(chat.id), chat_username: 'heraldthreads', bot_id: String(bot.id), bot_username: bot.username },
    });
    const ok = await h.api.request('POST', '/api/v1/threads', { body: { account_id: telegram.id, posts: [{ text: 'tg one' }, { text: 'tg two' }] } });
    assert.equal(ok.status, 201, ok.text);
    const sent = h.standIns.telegram.messages(chat.id);
    assert.deepEqual(sent.map((m) => [m.text, m.deleted]), [['tg one', false], ['tg two', false]]);
    const sends = h.standIns.telegram.standIn.calls('POST', /\/sendMessage$/);
    assert.ok(sends.every((r) => r.json?.reply_parameters === undefined && r.json?.reply_to_message_id === undefined), 'no part replies to another');
    assert.deepEqual(ok.body.data.posts.map((p: any) => [p.thread_order, p.platform_post_url]), [
      [1, `https://t.me/heraldthreads/${sent[0]!.message_id}`],
      [2, `https://t.me/heraldthreads/${sent[1]!.message_id}`],
    ]);

    h.standIns.telegram.standIn.inject({ method: 'POST', path: /\/sendMessage$/ }, { kind: 'delay', ms: 0 }, 1);
    h.standIns.telegram.standIn.inject({ method: 'POST', path: /\/sendMessage$/ }, { kind: 'reply', response: { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: message is too long' } } });
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: telegram.id, posts: [{ text: 'tg three' }, { text: 'tg four' }] } });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'upstream_error');
    const head = h.standIns.telegram.messages(chat.id).find((m) => m.text === 'tg three')!;
    assert.equal(head.deleted, true);
    assert.deepEqual(res.body.error.thread_rollback, { platform: 'telegram', published: 1, rolled_back: [String(head.message_id)], still_live: [], rollback_supported: true, quota_refunded: true });
    h.standIns.telegram.standIn.clearFaults();
  });

  it('a transient fault on a part is retried on that part; the thread goes out whole and nothing is deleted', async () => {
    const texts = ['hiccup one', 'hiccup two'];
    const deletesBefore = h.standIns.x.standIn.calls('DELETE').length;
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'delay', ms: 0 }, 1);
    h.standIns.x.standIn.inject(
      { method: 'POST', path: '/2/tweets' },
      { kind: 'reply', response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } } },
    );
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: texts.map((text) => ({ text })) } });
    assert.equal(res.status, 201, res.text);
    const [one, two] = texts.map((t) => tweetByText(t)!);
    assert.deepEqual(two!.referenced_tweets, [{ type: 'replied_to', id: one!.id }]);
    assert.equal(h.standIns.x.standIn.calls('DELETE').length, deletesBefore);
    assert.deepEqual(res.body.data.posts.map((p: any) => [p.status, p.retry_count]), [['published', 0], ['published', 0]]);
  });

  /** The next create lands but X answers 503; the next `failingLooks` reads of the user's timeline (the look) answer 500. */
  function landUnanswered(failingLooks: number): void {
    const tweets = { method: 'POST', path: '/2/tweets' };
    h.standIns.x.standIn.inject(tweets, { kind: 'delay', ms: 0 }, 1);
    h.standIns.x.standIn.inject(tweets, {
      kind: 'reply',
      thenHandle: true,
      response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } },
    });
    h.standIns.x.standIn.inject(
      { method: 'GET', path: /^\/2\/users\/[^/]+\/tweets$/ },
      { kind: 'reply', response: { status: 500, headers: { 'content-type': 'application/json' }, json: { title: 'Internal Server Error', detail: 'Internal Server Error', type: 'about:blank', status: 500 } } },
      failingLooks,
    );
  }

  it('a part whose create landed unanswered and whose first look failed is found by the look after it: the thread carries on, each part sent once, nothing deleted', async () => {
    const texts = [1, 2, 3].map((n) => `found again part ${n}`);
    // Part 2's create lands, X answers 503; its quick retry's look fails (outcome unknown); the call made once more
    // at once looks again and finds it. Before, the thread was rolled back (part 2 deleted with part 1) and answered 502.
    landUnanswered(1);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: texts.map((text) => ({ text })) } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(texts.map((text) => h.standIns.x.liveTweets().filter((t) => t.text === text).length), [1, 1, 1], 'each part live once');
    const [t1, t2] = texts.map((t) => tweetByText(t)!);
    assert.deepEqual(res.body.data.posts.map((p: { status: string; platform_post_id: string }) => [p.status, p.platform_post_id]).slice(0, 2), [['published', t1.id], ['published', t2.id]]);
  });

  it('a part whose create landed unanswered, its look failing, is looked for by the rollback and deleted: nothing of the thread stays live', async () => {
    const texts = [1, 2, 3].map((n) => `unconfirmed part ${n}`);
    // Part 2's create lands but X answers 503 (it may have taken effect: the mark stays open); its quick retry looks
    // first, and that look fails: the part's outcome is unknown; the call made once more at once looks again and
    // fails too, and the thread is rolled back.
    landUnanswered(2);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: texts.map((text) => ({ text })) } });
    assert.equal(res.status, 502, res.text);
    const [t1, t2] = texts.map((t) => tweetByText(t));
    assert.ok(t1 && t2, 'parts 1 and 2 reached X');
    assert.equal(tweetByText(texts[2]!), undefined, 'part 3 was never sent');
    assert.deepEqual(res.body.error.thread_rollback, { platform: 'x', published: 2, rolled_back: [t2.id, t1.id], still_live: [], rollback_supported: true, quota_refunded: true });
    assert.deepEqual(h.standIns.x.liveTweets().filter((t) => texts.includes(t.text)), [], 'no part left live (part 2 was, replying to a deleted part 1)');
    assert.deepEqual(await threadRows(texts), []);
  });

  it('a part X refuses to delete stays live: 502 thread_rollback_incomplete with the exact rollback object, no rows, quota back', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const texts = [1, 2, 3, 4].map((n) => `incomplete part ${n}`);
    refuseCreateAt(4);
    // Rollback deletes part 3 first: X refuses that one delete, parts 2 and 1 go.
    h.standIns.x.standIn.inject(
      { method: 'DELETE', path: /^\/2\/tweets\// },
      xAnswers.deleteRefused,
    );
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: texts.map((text) => ({ text })) } });
    assert.equal(res.status, 502, res.text);
    const [t1, t2, t3] = texts.slice(0, 3).map((t) => tweetByText(t)!);
    const sentence = res.body.error.message.split(' (part ')[0];
    assert.deepEqual(res.body, {
      error: {
        code: 'thread_rollback_incomplete',
        message: `${sentence} (part 4 of 4). Part 3 is still live and could not be deleted; delete it on the platform before sending the thread again.`,
        thread_rollback: {
          platform: 'x',
          published: 3,
          rolled_back: [t2!.id, t1!.id],
          still_live: [{ thread_order: 3, platform_post_id: t3!.id, platform_post_url: url(t3!.id) }],
          rollback_supported: true,
          quota_refunded: true,
        },
      },
    });
    assert.deepEqual(h.standIns.x.liveTweets().filter((t) => texts.includes(t.text)).map((t) => t.id), [t3!.id]);
    assert.deepEqual(await threadRows(texts), []);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);

    // Answered without the workflow's result (its read failed), from the thread.failed event: the same error.
    const event = await h.db.selectFrom('events').select(sql<string>`data->>'thread_id'`.as('thread_id')).where('user_id', '=', h.api.userId).where('type', '=', 'thread.failed').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    const fromEvent = await threadOutcome({ db: h.db }, { created: [{ threadId: event.thread_id, userId: h.api.userId, account: x, postIds: [] }], outcomes: new Map(), fanOut: false, groupId: null, draft: false, warnings: [] });
    assert.deepEqual(fromEvent, { kind: 'platform_refused', code: res.body.error.code, message: res.body.error.message, details: { thread_rollback: res.body.error.thread_rollback } });
  });

  it('a credential X refuses mid-thread marks the account connection_lost and cancels its scheduled posts', async () => {
    await h.syncClock();
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await refusalsTakenAsReal(h.db, account);
    const at = new Date(h.now().getTime() + 5 * 3_600_000).toISOString();
    const scheduled = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'waits for later', schedule_at: at } });
    assert.equal(scheduled.status, 201, scheduled.text);
    const tweets = { method: 'POST', path: '/2/tweets' };
    h.standIns.x.standIn.inject(tweets, { kind: 'delay', ms: 0 }, 1);
    h.standIns.x.standIn.inject(tweets, xAnswers.unauthorized);
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: [{ text: 'cred one' }, { text: 'cred two' }] } });
    assert.equal(res.status, 502, res.text);
    const state = await h.db.selectFrom('accounts').select(['active', 'inactive_reason']).where('id', '=', account.id).executeTakeFirstOrThrow();
    assert.deepEqual(state, { active: false, inactive_reason: 'connection_lost' });
    const cancelled = await h.db.selectFrom('posts').select(['status', 'error_message']).where('id', '=', scheduled.body.data.id).executeTakeFirstOrThrow();
    assert.deepEqual(cancelled, { status: 'deleted', error_message: 'connection_lost' });
  });
});
