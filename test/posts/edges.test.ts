import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { SCHEDULE_SPACING_MINUTES } from '../../src/platforms/capabilities';
import { reconcilePosts, startReconciler } from '../../src/posts/reconcile';
import { findStuckPosts } from '../../src/posts/stuck';
import { postsNeedingWorkflows } from '../../src/posts/reconcile-queries';
import { postWorkflowId, startPublishWorkflow } from '../../src/posts/workflow-client';
import { testConfig } from '../helpers/api';
import { insertAccount, insertMastodonAccount, insertThreadsAccount, insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';
import { withHandles } from './temporal-handles';

describe('Posts: idempotency, scopes, availability, unknown outcomes, quick retries, reconciliation', function () {
  this.timeout(90_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent', config: testConfig({ HERALD_COMING_SOON: 'mastodon' }) });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const inMinutes = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000);
  /** The `i`-th of several waiting posts of one account written here: each its own slot (migration 0230). */
  const spaced = (minutes: number, i: number) => inMinutes(minutes + i * SCHEDULE_SPACING_MINUTES);
  /** A periodic look's scope: what changed in the last `minutes` (by the database's clock), and the overdue. */
  const lastMinutes = (minutes: number) => ({ changedWithinMs: minutes * 60_000 });
  const tweetCreates = () => h.standIns.x.standIn.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets').length;

  it('the same Idempotency-Key and body replays the original answer and publishes once', async () => {
    const headers = { 'Idempotency-Key': `create-${Date.now()}` };
    const first = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'exactly once' }, headers });
    assert.equal(first.status, 201, first.text);
    const again = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'exactly once' }, headers });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replay'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'exactly once').length, 1);
    const reused = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'something else' }, headers });
    assert.equal(reused.status, 422);
    assert.equal(reused.body.error.code, 'idempotency_key_reused');
  });

  it('a key without posts:write is 403 insufficient_scope', async () => {
    const reader = await h.api.newUser('agent', ['posts:read']);
    const res = await h.api.request('POST', '/api/v1/posts', { key: reader.apiKey, body: { account_id: x.id, text: 'no scope' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'insufficient_scope');
    assert.match(res.body.error.message, /posts:write/);
  });

  it('an account on a platform marked coming soon is 501 platform_coming_soon (prefixed in a fan-out)', async () => {
    const m = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const single = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'soon' } });
    assert.deepEqual(single.body, { error: { code: 'platform_coming_soon', message: 'Mastodon is coming soon and not yet available.' } });
    assert.equal(single.status, 501);
    const fan = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'soon' } });
    assert.deepEqual(fan.body, { error: { code: 'platform_coming_soon', message: `Account ${m.id}: Mastodon is coming soon and not yet available.` } });
  });

  it('an unknown outcome is never repeated: failed with a sentence telling the user to check before resending', async () => {
    const before = tweetCreates();
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reset' }, 1);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'lost answer' } });
    assert.deepEqual(res.body, {
      error: { code: 'upstream_error', message: 'X did not confirm whether the post was published; check the account before sending it again.' },
    });
    assert.equal(res.status, 502);
    assert.equal(tweetCreates() - before, 1, 'one create, no blind repeat');
    const row = await h.db.selectFrom('posts').select(['status', 'retry_count']).where('text', '=', 'lost answer').executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'failed', retry_count: 1 });
  });

  it('an immediate post retries a transient failure quickly inside the request', async () => {
    h.standIns.x.standIn.inject(
      { method: 'POST', path: '/2/tweets' },
      { kind: 'reply', response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', status: 503, type: 'about:blank', detail: 'x' } } },
      1,
    );
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'second try' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual([res.body.data.status, res.body.data.retry_count], ['published', 1]);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'second try').length, 1);
  });

  it('a scheduled post with a first comment: both go out at the time, the post first; hiding does not stop it', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'later with comment', first_comment: 'later comment', schedule_at: inMinutes(45).toISOString() } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.data.first_comment, { text: 'later comment', status: 'pending', comment_id: null, error: null });
    await h.api.request('POST', `/api/v1/posts/${res.body.data.id}/hide`);
    assert.deepEqual(await h.settle(res.body.data.id), { outcome: 'published', firstComment: 'posted' });
    const got = await h.api.request('GET', `/api/v1/posts/${res.body.data.id}`);
    assert.deepEqual([got.body.data.status, got.body.data.hidden, got.body.data.first_comment.status], ['published', true, 'posted']);
    const post = h.standIns.x.tweets().find((t) => t.text === 'later with comment')!;
    const comment = h.standIns.x.tweets().find((t) => t.text === 'later comment')!;
    assert.deepEqual(comment.referenced_tweets, [{ type: 'replied_to', id: post.id }]);
  });

  it('reconciliation gives a post that needs a workflow its workflow; herald posts stuck lists it until then', async () => {
    await h.syncClock();
    const orphan = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: 'orphan', status: 'scheduled', scheduled_at: inMinutes(500) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const rt = h.reconcilerRuntime();
    const stuck = await findStuckPosts(h.db, h.env.client);
    assert.deepEqual(
      stuck.filter((p) => p.id === orphan.id).map((p) => [p.workflow, p.reason]),
      [['missing', 'the post is scheduled but its workflow is missing']],
    );
    const first = await reconcilePosts(rt);
    assert.ok(first.started.includes(postWorkflowId(orphan.id)));
    assert.equal((await findStuckPosts(h.db, h.env.client)).filter((p) => p.id === orphan.id).length, 0);
    // Judged by this post's workflow, not by the count: the shared test database holds other suites' rows too.
    const second = await reconcilePosts(rt);
    assert.ok(!second.started.includes(postWorkflowId(orphan.id)), 'a running workflow is left alone');
    await h.api.request('DELETE', `/api/v1/posts/${orphan.id}`);
    assert.deepEqual(await h.settle(orphan.id), { outcome: 'gone' });
  });

  it('herald posts stuck without a Temporal client: a post past its time, or past its retry\'s time, with no attempt; not one whose retry still waits', async () => {
    const now = new Date('2031-03-01T12:00:00Z');
    const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
    const rows = await h.db
      .insertInto('posts')
      .values([
        { text: 'never tried', scheduled_at: ago(10), retry_count: 0, next_attempt_at: null },
        { text: 'retry waits', scheduled_at: ago(30), retry_count: 2, next_attempt_at: ago(-1) },
        { text: 'retry overdue', scheduled_at: ago(30), retry_count: 1, next_attempt_at: ago(10) },
      ].map((row) => ({ ...row, user_id: h.api.userId, account_id: x.id, platform: 'x' as const, status: 'scheduled' as const })))
      .returning(['id', 'text'])
      .execute();
    try {
      const stuck = await findStuckPosts(h.db, null, now);
      const textOf = new Map(rows.map((r) => [r.id, r.text]));
      assert.deepEqual(
        stuck.filter((p) => textOf.has(p.id)).map((p) => [textOf.get(p.id), p.reason]).sort(),
        [
          ['never tried', 'scheduled time passed without an attempt'],
          ['retry overdue', "a retry's time passed without an attempt"],
        ],
      );
    } finally {
      await h.db.deleteFrom('posts').where('id', 'in', rows.map((r) => r.id)).execute();
    }
  });

  it('the periodic reconcile skips a scheduled post whose workflow this process started moments ago, not one it did not start', async () => {
    await h.syncClock();
    const [started, orphan] = await h.db
      .insertInto('posts')
      .values(['started here', 'never started'].map((text, i) => ({ user_id: h.api.userId, account_id: x.id, platform: 'x' as const, text, status: 'scheduled' as const, scheduled_at: spaced(700, i) })))
      .returning('id')
      .execute();
    try {
      const rt = h.reconcilerRuntime();
      await startPublishWorkflow(rt, started!.id);
      // Gone behind this process's back (an operator's terminate): the look a minute later is what no longer sees it.
      await h.env.client.workflow.getHandle(postWorkflowId(started!.id)).terminate('test');
      const periodic = await reconcilePosts(rt, lastMinutes(2));
      assert.ok(periodic.started.includes(postWorkflowId(orphan!.id)), 'a post created moments ago and never started gets its workflow');
      assert.ok(!periodic.started.includes(postWorkflowId(started!.id)), 'a start this process saw succeed is not looked at again');
      // Another process (or this one after a restart) knows of no such start, and restarts it.
      const elsewhere = await reconcilePosts(h.reconcilerRuntime(), lastMinutes(2));
      assert.ok(elsewhere.started.includes(postWorkflowId(started!.id)));
    } finally {
      for (const row of [started!, orphan!]) await h.env.client.workflow.getHandle(postWorkflowId(row.id)).terminate('test').catch(() => undefined);
      await h.db.deleteFrom('posts').where('id', 'in', [started!.id, orphan!.id]).execute();
    }
  });

  it("the periodic reconcile reads a burst's rows page by page and skips those this process started, across pages", async () => {
    await h.syncClock();
    // More rows than one page of the cursor (500), as a burst of scheduling leaves them.
    const burst = await h.db
      .insertInto('posts')
      .values(Array.from({ length: 1_201 }, (_, i) => ({ user_id: h.api.userId, account_id: x.id, platform: 'x' as const, text: `burst ${i}`, status: 'scheduled' as const, scheduled_at: spaced(900, i) })))
      .returning(['id', 'scheduled_at'])
      .execute();
    const ours = new Set(burst.map((row) => row.id));
    try {
      const seen: string[] = [];
      const kept = await postsNeedingWorkflows(h.db, lastMinutes(2), (row) => {
        if (!ours.has(row.id)) return false;
        seen.push(row.id);
        return seen.length % 400 === 1;
      });
      assert.equal(seen.length, 1_201, 'every row is read');
      assert.deepEqual(new Set(seen), ours);
      assert.deepEqual(kept.map((row) => row.id), [0, 400, 800, 1_200].map((i) => seen[i]));
      assert.deepEqual(kept.map((row) => row.scheduled_ms), [...kept.map((row) => row.scheduled_ms!)].sort((a, b) => a - b));
      const byId = new Map(burst.map((row) => [row.id, row.scheduled_at!.getTime()]));
      // Due times as epoch milliseconds, to the millisecond (the database keeps microseconds: none here).
      for (const row of kept) assert.ok(Math.abs(row.scheduled_ms! - byId.get(row.id)!) < 1, `${row.scheduled_ms} for ${byId.get(row.id)}`);

      // Started here (as far as this runtime knows): none is looked at, on whichever page it came.
      const rt = h.reconcilerRuntime();
      for (const row of burst) rt.recentlyRunning!.record(postWorkflowId(row.id));
      const periodic = await reconcilePosts(rt, lastMinutes(2));
      assert.ok(periodic.checked >= 1_201);
      assert.deepEqual(periodic.started.filter((id) => burst.some((row) => postWorkflowId(row.id) === id)), []);
    } finally {
      await h.db.deleteFrom('posts').where('id', 'in', [...ours]).execute();
    }
  });

  it("a periodic look reads what changed within its reach and the overdue, not older posts still waiting", async () => {
    const longAgo = new Date(Date.now() - 11 * 60_000); // by the database's clock, as `created_at` is
    const rows = await h.db
      .insertInto('posts')
      .values([
        { text: 'created long ago', created_at: longAgo, updated_at: longAgo, scheduled_at: spaced(800, 0) },
        { text: 'created now', scheduled_at: spaced(800, 1) },
        { text: 'overdue', created_at: longAgo, updated_at: longAgo, scheduled_at: new Date(Date.now() - 2 * 60_000) },
      ].map((row) => ({ ...row, user_id: h.api.userId, account_id: x.id, platform: 'x' as const, status: 'scheduled' as const })))
      .returning(['id', 'text'])
      .execute();
    const ours = new Map(rows.map((row) => [row.id, row.text]));
    try {
      const read = async (minutes: number) => (await postsNeedingWorkflows(h.db, lastMinutes(minutes), (row) => ours.has(row.id))).map((row) => ours.get(row.id)).sort();
      assert.deepEqual(await read(2), ['created now', 'overdue']);
      assert.deepEqual(await read(12), ['created long ago', 'created now', 'overdue']);
    } finally {
      await h.db.deleteFrom('posts').where('id', 'in', [...ours.keys()]).execute();
    }
  });

  it('after a look that could not reach Temporal, the next reaches back to before it (a post created during an outage is not left until due)', async () => {
    const longAgo = new Date(Date.now() - 15 * 60_000);
    const orphan = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: 'created during an outage', status: 'scheduled', scheduled_at: inMinutes(900), created_at: longAgo, updated_at: longAgo })
      .returning('id')
      .executeTakeFirstOrThrow();
    let unavailable = true;
    const rt = withHandles(h.reconcilerRuntime(), () => (unavailable ? { describe: () => Promise.reject(new Error('Temporal is unavailable')) } : undefined));
    const reconciler = startReconciler(rt, 200);
    try {
      assert.ok((await reconciler.first).failed >= 1, 'the look at start could not describe the orphan');
      unavailable = false;
      const handle = h.env.client.workflow.getHandle(postWorkflowId(orphan.id));
      const deadline = Date.now() + 20_000;
      while (!(await handle.describe().then(() => true, () => false))) {
        assert.ok(Date.now() < deadline, 'a periodic look started the post created 15 minutes ago');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await reconciler.stop();
      await h.env.client.workflow.getHandle(postWorkflowId(orphan.id)).terminate('test').catch(() => undefined);
      await h.db.deleteFrom('posts').where('id', '=', orphan.id).execute();
    }
  });

  it('a look still running when the next is due lets that one pass (looks over everything never pile up)', async () => {
    const orphan = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: 'looked at slowly', status: 'scheduled', scheduled_at: inMinutes(950) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const watched = postWorkflowId(orphan.id);
    let inFlight = 0;
    let mostInFlight = 0;
    let looks = 0;
    // Temporal answers slowly and with an error: every look fails, so each is over everything and lasts 300 ms.
    const slowDescribe = async () => {
      inFlight++;
      looks++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 300));
      inFlight--;
      throw new Error('Temporal is slow and unavailable');
    };
    const reconciler = startReconciler(withHandles(h.reconcilerRuntime(), (id) => (id === watched ? { describe: slowDescribe } : undefined)), 50);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      assert.ok(looks >= 2, `${looks} looks`);
      assert.equal(mostInFlight, 1, 'never two looks at once');
    } finally {
      await reconciler.stop();
      await h.db.deleteFrom('posts').where('id', '=', orphan.id).execute();
    }
  });

  it('a reconciler stopped during its first run starts nothing more, and its stop resolves once that run has ended', async () => {
    const orphans = await h.db
      .insertInto('posts')
      .values(Array.from({ length: 5 }, (_, i) => ({ user_id: h.api.userId, account_id: x.id, platform: 'x' as const, text: `orphan at stop ${i}`, status: 'scheduled' as const, scheduled_at: spaced(600, i) })))
      .returning('id')
      .execute();
    try {
      const reconciler = startReconciler(h.reconcilerRuntime());
      let firstEnded = false;
      void reconciler.first.then(() => (firstEnded = true));
      await reconciler.stop();
      await Promise.resolve();
      assert.equal(firstEnded, true, 'stop() waited for the run in progress');
      // Stopped before its read of the rows came back: not one workflow started through a client being closed.
      assert.deepEqual((await reconciler.first).started, []);
      for (const { id } of orphans) await assert.rejects(h.env.client.workflow.getHandle(postWorkflowId(id)).describe());
    } finally {
      // Not left scheduled without a workflow: later suites reconcile every row of the shared test database.
      await h.db.deleteFrom('posts').where('id', 'in', orphans.map((o) => o.id)).execute();
    }
  });

  it('a post found publishing after a restart is looked up on the platform before anything is sent again', async () => {
    const live = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'landed before the crash' } });
    assert.equal(live.status, 201);
    // The answer can precede the workflow's close: let it end before pretending it never did.
    await h.settle(live.body.data.id);
    // The process stopped after the platform took it and before the row said so (its attempt marker still set).
    await h.db
      .updateTable('posts')
      .set({ status: 'publishing', platform_post_id: null, platform_post_url: null, published_at: null, publish_attempt_started_at: new Date() })
      .where('id', '=', live.body.data.id)
      .execute();
    const rt = h.reconcilerRuntime();
    await reconcilePosts(rt);
    assert.deepEqual(await h.settle(live.body.data.id), { outcome: 'published', firstComment: null });
    const got = await h.api.request('GET', `/api/v1/posts/${live.body.data.id}`);
    assert.deepEqual([got.body.data.status, got.body.data.platform_post_id], ['published', live.body.data.platform_post_id]);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'landed before the crash').length, 1);
  });

  describe('threads and instagram links (publishing-api.md "platform_post_url shapes")', () => {
    let threadsAccount: AccountRow;
    let instagramAccount: AccountRow;
    before(async () => {
      threadsAccount = await insertThreadsAccount(h.db, h.api.userId, h.standIns.threads);
      const ig = h.standIns.instagram.user;
      instagramAccount = await insertAccount(h.db, h.api.userId, {
        platform: 'instagram', platform_account_id: ig.igUserId, username: ig.username, via: 'instagram', credentials: { access_token: ig.igToken }, settings: { igUserId: ig.igUserId },
      });
    });
    afterEach(() => Object.assign(h.standIns.threads.state, { withholdPermalinks: false, permalinkFailures: 0 }));

    /** The link reads of a threads post so far (Herald reads nothing else of a published post here). */
    const linkReads = (platformPostId: string) => h.standIns.threads.standIn.calls('GET', `/v1.0/${platformPostId}`).length;
    const publishOnThreads = async (text: string) => {
      const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: threadsAccount.id, text } });
      assert.equal(res.status, 201, res.text);
      return res.body.data as { id: string; platform_post_id: string; platform_post_url: string | null };
    };
    const storedLink = (postId: string) => h.db.selectFrom('posts').select(['platform_post_url', 'platform_post_url_unread']).where('id', '=', postId).executeTakeFirstOrThrow();

    it('GET asks threads once more for a link it could not read at publish time, stores it, and asks no more', async () => {
      const threads = h.standIns.threads;
      threads.state.permalinkFailures = 1;
      const published = await publishOnThreads('link later');
      assert.equal(published.platform_post_url, null);
      assert.equal(linkReads(published.platform_post_id), 1, 'the read at publish time, which failed');
      const listed = await h.api.request('GET', '/api/v1/posts?limit=100');
      assert.equal(listed.body.data.find((p: any) => p.id === published.id).platform_post_url, null, 'listings never ask the platform');
      assert.equal(linkReads(published.platform_post_id), 1);
      const got = await h.api.request('GET', `/api/v1/posts/${published.id}`);
      const link = threads.permalinkOf(threads.posts.get(published.platform_post_id)!);
      assert.equal(got.body.data.platform_post_url, link);
      assert.deepEqual(await storedLink(published.id), { platform_post_url: link, platform_post_url_unread: false });
      assert.equal(linkReads(published.platform_post_id), 2);
      const again = await h.api.request('GET', `/api/v1/posts/${published.id}`);
      assert.equal(again.body.data.platform_post_url, link);
      assert.equal(linkReads(published.platform_post_id), 2, 'a link stored is not asked for again');
    });

    it('GET never asks threads for a link it answered it does not have, and stores "none" after the one ask', async () => {
      const threads = h.standIns.threads;
      threads.state.withholdPermalinks = true;
      const none = await publishOnThreads('no link given');
      assert.equal(none.platform_post_url, null);
      for (let i = 0; i < 2; i++) assert.equal((await h.api.request('GET', `/api/v1/posts/${none.id}`)).body.data.platform_post_url, null);
      assert.equal(linkReads(none.platform_post_id), 1, 'only the read at publish time');
      // A read that failed, then answered with no link: that answer is stored too, and not asked for again.
      threads.state.permalinkFailures = 1;
      const unread = await publishOnThreads('no link, read later');
      for (let i = 0; i < 2; i++) assert.equal((await h.api.request('GET', `/api/v1/posts/${unread.id}`)).body.data.platform_post_url, null);
      assert.equal(linkReads(unread.platform_post_id), 2, 'the failed read, then one ask');
      assert.deepEqual(await storedLink(unread.id), { platform_post_url: null, platform_post_url_unread: false });
    });

    it('a failed ask leaves the link to the next GET', async () => {
      const threads = h.standIns.threads;
      threads.state.permalinkFailures = 2;
      const published = await publishOnThreads('asked twice');
      const first = await h.api.request('GET', `/api/v1/posts/${published.id}`);
      assert.deepEqual([first.status, first.body.data.platform_post_url], [200, null], 'a failed ask never fails the read');
      assert.deepEqual(await storedLink(published.id), { platform_post_url: null, platform_post_url_unread: true });
      const second = await h.api.request('GET', `/api/v1/posts/${published.id}`);
      assert.equal(second.body.data.platform_post_url, threads.permalinkOf(threads.posts.get(published.platform_post_id)!));
      await h.api.request('GET', `/api/v1/posts/${published.id}`);
      assert.equal(linkReads(published.platform_post_id), 3, 'publish, the failed ask, the ask answered');
    });

    it("a thread part whose link could not be read is asked for by GET once; its other parts are not", async () => {
      const threads = h.standIns.threads;
      threads.state.permalinkFailures = 1; // the first part's read
      const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: threadsAccount.id, posts: [{ text: 'part one, link later' }, { text: 'part two' }] } });
      assert.equal(res.status, 201, res.text);
      const [one, two] = res.body.data.posts as Array<{ id: string; platform_post_id: string; platform_post_url: string | null }>;
      assert.deepEqual([one!.platform_post_url, two!.platform_post_url], [null, threads.permalinkOf(threads.posts.get(two!.platform_post_id)!)]);
      for (const part of [one!, two!, one!, two!]) await h.api.request('GET', `/api/v1/posts/${part.id}`);
      assert.deepEqual(await storedLink(one!.id), { platform_post_url: threads.permalinkOf(threads.posts.get(one!.platform_post_id)!), platform_post_url_unread: false });
      assert.deepEqual([linkReads(one!.platform_post_id), linkReads(two!.platform_post_id)], [2, 1]);
    });

    it('GET of an instagram story the platform gave no link makes no platform call', async () => {
      const ig = h.standIns.instagram;
      const mediaId = '17900000000000777';
      ig.media.set(mediaId, { id: mediaId, kind: 'story', timestamp: new Date().toISOString(), shortcode: 'Cstory', containerId: 'c-story', children: [] });
      // As its publish recorded it: no link, and not unread (the platform answered without one).
      const story = await h.db
        .insertInto('posts')
        .values({ user_id: h.api.userId, account_id: instagramAccount.id, platform: 'instagram', text: '', status: 'published', platform_post_id: mediaId, published_at: new Date(), configuration: JSON.stringify({ placement: 'story' }) })
        .returning('id')
        .executeTakeFirstOrThrow();
      const before = ig.standIn.requests.length;
      for (let i = 0; i < 2; i++) {
        const got = await h.api.request('GET', `/api/v1/posts/${story.id}`);
        assert.deepEqual([got.status, got.body.data.platform_post_url], [200, null]);
      }
      assert.equal(ig.standIn.requests.length, before);
    });
  });

  it('a post edited many times while it waits continues as new and still publishes once', async () => {
    await h.syncClock();
    const row = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: 'many edits', status: 'scheduled', scheduled_at: inMinutes(600) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const handle = await h.env.client.workflow.start('publishPost', {
      taskQueue: h.taskQueue,
      workflowId: `post-${row.id}`,
      args: [{ postId: row.id, scheduledRetryDelaysMs: [60_000], immediateRetryDelaysMs: [], historyLimit: 12 }],
    });
    for (let i = 0; i < 8; i++) {
      await h.db.updateTable('posts').set({ text: `many edits ${i}` }).where('id', '=', row.id).execute();
      await handle.signal('postEdited');
      await h.env.sleep(100);
    }
    const first = await h.env.client.workflow.getHandle(`post-${row.id}`, handle.firstExecutionRunId).describe();
    assert.equal(first.status.name, 'CONTINUED_AS_NEW');
    assert.deepEqual(await h.settle(row.id), { outcome: 'published', firstComment: null });
    assert.equal(h.standIns.x.tweets().filter((t) => t.text.startsWith('many edits')).map((t) => t.text).join(), 'many edits 7');
  });
});
