import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createActivities } from '../../activities';
import { startPostChangeFeed, isSettled } from '../../src/posts/change-feed';
import { startDatabaseNotifications } from '../../src/db/notifications';
import { loadPostViews } from '../../src/posts/view-queries';
import { createLogger } from '../../src/logger';
import { testDatabase } from '../helpers/db';
import { graphErrors } from '../standins/graph';
import { insertMastodonAccount, insertTelegramAccount, insertThreadsAccount, insertXAccount } from './fixtures';
import { harnessActivities, startPostsHarness, type PostsHarness } from './harness';

/**
 * A platform call that never reported back (a worker stopped mid-call, a local activity run again after its workflow
 * task was lost) leaves `publish_attempt_started_at` set; the next attempt must not blindly send again. And the
 * change feed that lets an immediate publish answer as soon as its row settles.
 */
describe('Posts: interrupted platform calls and the change feed', function () {
  let h: PostsHarness;
  let activities: ReturnType<typeof createActivities>;
  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    activities = harnessActivities(h);
  });
  after(async () => h?.stop());

  async function publishingRow(accountId: string, platform: 'x' | 'mastodon' | 'telegram', text: string, interrupted: boolean) {
    return h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: accountId, platform, text, status: 'publishing', publish_attempt_started_at: interrupted ? new Date() : null })
      .returning('id')
      .executeTakeFirstOrThrow();
  }

  const telegramAccount = () => insertTelegramAccount(h.db, h.api.userId, h.standIns.telegram);

  it('marks the attempt, and a first attempt sends at once', async () => {
    const { account, chat } = await telegramAccount();
    const row = await publishingRow(account.id, 'telegram', 'first try', false);
    const attempt = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(attempt.ok, true);
    assert.deepEqual(h.standIns.telegram.messages(chat.id).map((m) => m.text), ['first try']);
    const stored = await h.db.selectFrom('posts').select(['status', 'publish_attempt_started_at']).where('id', '=', row.id).executeTakeFirstOrThrow();
    assert.equal(stored.status, 'published');
    assert.ok(stored.publish_attempt_started_at instanceof Date);
  });

  it('an interrupted attempt on a platform that can neither be searched nor repeated safely (telegram) is reported, not resent', async () => {
    const { account, chat } = await telegramAccount();
    const row = await publishingRow(account.id, 'telegram', 'maybe sent', true);
    const attempt = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.deepEqual(attempt.ok === false && 'message' in attempt ? [attempt.kind, attempt.message] : attempt, [
      'unknown_outcome',
      'Telegram did not confirm whether the post was published; check the account before sending it again.',
    ]);
    assert.deepEqual(h.standIns.telegram.messages(chat.id), []);
  });

  it('an interrupted attempt on x is looked up first: found, it is recorded without a second create', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const row = await publishingRow(x.id, 'x', 'landed, then the worker stopped', false);
    assert.equal((await activities.publishToPlatform({ postId: row.id, now: Date.now() })).ok, true);
    // Back to the state of a worker that stopped between the platform's answer and the write.
    await h.db.updateTable('posts').set({ status: 'publishing', platform_post_id: null }).where('id', '=', row.id).execute();
    const again = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(again.ok, true);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'landed, then the worker stopped').length, 1);
  });

  it('an interrupted attempt whose look fails is reported unconfirmed, its mark kept, never sent again', async () => {
    const threads = await insertThreadsAccount(h.db, h.api.userId, h.standIns.threads);
    const row = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: threads.id, platform: 'threads', text: 'landed, then the look failed', status: 'publishing', publish_attempt_started_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    const th = h.standIns.threads;
    const look = { method: 'GET', path: `/v1.0/${th.user.id}/threads` };
    // Graph code 2 says "nothing was changed" of the look, not of the earlier create: it must not clear the mark.
    th.standIn.inject(look, { kind: 'reply', response: graphErrors.transient() });
    const attempt = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.deepEqual(attempt.ok === false && 'message' in attempt ? [attempt.kind, attempt.message] : attempt, [
      'unknown_outcome',
      'Threads did not confirm whether the post was published; check the account before sending it again.',
    ]);
    const stored = await h.db.selectFrom('posts').select('publish_attempt_started_at').where('id', '=', row.id).executeTakeFirstOrThrow();
    assert.ok(stored.publish_attempt_started_at instanceof Date, 'the mark stays');
    // A permission error (code 10) of the look is no lost connection either.
    th.standIn.inject(look, { kind: 'reply', response: graphErrors.permission(10) });
    const again = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(again.ok === false && 'message' in again ? again.kind : again, 'unknown_outcome');
    assert.equal([...th.posts.values()].filter((p) => p.text === 'landed, then the look failed').length, 0, 'nothing was sent');
  });

  it('an interrupted attempt on mastodon is repeated under the same Idempotency-Key: still one status', async () => {
    const m = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const row = await publishingRow(m.id, 'mastodon', 'idempotent toot', false);
    const first = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    await h.db.updateTable('posts').set({ status: 'publishing', platform_post_id: null }).where('id', '=', row.id).execute();
    const second = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.ok(first.ok && second.ok);
    assert.equal(second.platformPostId, first.platformPostId);
  });

  it('a refusal clears the mark: the retry that follows is a plain first attempt', async () => {
    const { account, chat } = await telegramAccount();
    const row = await publishingRow(account.id, 'telegram', 'refused once', false);
    h.standIns.telegram.floodWait('sendMessage', 1);
    const refused = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(refused.ok, false);
    const marker = await h.db.selectFrom('posts').select('publish_attempt_started_at').where('id', '=', row.id).executeTakeFirstOrThrow();
    assert.equal(marker.publish_attempt_started_at, null);
    assert.equal((await activities.publishToPlatform({ postId: row.id, now: Date.now() })).ok, true);
    assert.deepEqual(h.standIns.telegram.messages(chat.id).map((m) => m.text), ['refused once']);
  });

  it('a server error to a send keeps the mark: telegram\'s retry is reported unconfirmed, x\'s finds the post that landed', async () => {
    const { account, chat } = await telegramAccount();
    const row = await publishingRow(account.id, 'telegram', 'landed, then 500', false);
    const serverError = { status: 500, json: { ok: false, error_code: 500, description: 'Internal Server Error' } };
    h.standIns.telegram.standIn.inject({ method: 'POST', path: /\/sendMessage$/ }, { kind: 'reply', thenHandle: true, response: serverError });
    assert.equal((await activities.publishToPlatform({ postId: row.id, now: Date.now() })).ok, false);
    const retried = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(retried.ok ? 'ok' : retried.kind, 'unknown_outcome');
    assert.deepEqual(h.standIns.telegram.messages(chat.id).map((m) => m.text), ['landed, then 500']);

    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const xRow = await publishingRow(x.id, 'x', 'landed, then 503', false);
    const unavailable = { status: 503, json: { title: 'Service Unavailable', type: 'about:blank', status: 503 } };
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reply', thenHandle: true, response: unavailable });
    assert.equal((await activities.publishToPlatform({ postId: xRow.id, now: Date.now() })).ok, false);
    const found = await activities.publishToPlatform({ postId: xRow.id, now: Date.now() });
    assert.equal(found.ok, true);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'landed, then 503').length, 1);
  });

  it('a first comment whose earlier call never reported back is reported unconfirmed, not sent twice; a user retry sends it', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const row = await publishingRow(x.id, 'x', 'commented on', false);
    assert.equal((await activities.publishToPlatform({ postId: row.id, now: Date.now() })).ok, true);
    await h.db
      .updateTable('posts')
      .set({ first_comment_text: 'maybe posted already', first_comment_status: 'pending', first_comment_attempt_started_at: new Date() })
      .where('id', '=', row.id)
      .execute();
    assert.equal(await activities.publishFirstComment({ postId: row.id }), 'failed');
    const stored = await h.db.selectFrom('posts').select(['first_comment_status', 'first_comment_error']).where('id', '=', row.id).executeTakeFirstOrThrow();
    assert.deepEqual(stored, {
      first_comment_status: 'failed',
      first_comment_error: 'X did not confirm whether the first comment was published; check the account before sending it again.',
    });
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'maybe posted already').length, 0);
    const retried = await h.api.request('POST', `/api/v1/posts/${row.id}/first-comment`);
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.body.data.first_comment.status, 'posted');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'maybe posted already').length, 1);
  });

  it('the change feed settles a watch on the committed change that answers the request, not before', async () => {
    const notifications = startDatabaseNotifications((await testDatabase()).url, createLogger('silent'));
    const feed = startPostChangeFeed(notifications);
    try {
      const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
      const row = await h.db
        .insertInto('posts')
        .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: 'watched', status: 'publishing', first_comment_text: 'under it', first_comment_status: 'pending' })
        .returning('id')
        .executeTakeFirstOrThrow();
      let settled = false;
      const watch = feed.watch(row.id);
      void watch.settled.then(() => (settled = true));
      // The feed connects in the background; a change committed before its LISTEN would be missed.
      await feed.ready;
      await h.db.updateTable('posts').set({ status: 'published' }).where('id', '=', row.id).execute();
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(settled, false, 'published with its first comment still pending is not the answer yet');
      await h.db.updateTable('posts').set({ first_comment_status: 'posted' }).where('id', '=', row.id).execute();
      assert.equal(await watch.settled, 'settled');
      watch.stop();
    } finally {
      feed.close();
      await notifications.close();
    }
  });

  it('the change feed reports a publishing row removed (a failed immediate thread) as removed, and says nothing of a draft removed', async () => {
    const notifications = startDatabaseNotifications((await testDatabase()).url, createLogger('silent'));
    const feed = startPostChangeFeed(notifications);
    try {
      await feed.ready;
      const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
      const insert = (status: 'publishing' | 'draft') =>
        h.db.insertInto('posts').values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: `removed ${status}`, status }).returning('id').executeTakeFirstOrThrow();
      const [publishing, draft] = [await insert('publishing'), await insert('draft')];
      const [publishingWatch, draftWatch] = [feed.watch(publishing.id), feed.watch(draft.id)];
      await h.db.deleteFrom('posts').where('id', 'in', [publishing.id, draft.id]).execute();
      assert.equal(await publishingWatch.settled, 'removed');
      const draftHeard = await Promise.race([draftWatch.settled, new Promise((resolve) => setTimeout(resolve, 300, 'nothing'))]);
      assert.equal(draftHeard, 'nothing');
      publishingWatch.stop();
      draftWatch.stop();
    } finally {
      feed.close();
      await notifications.close();
    }
  });

  it('the change feed settles a watch with the view its process recorded, once that view is the answer; a NOTIFY heard first waits for it', async () => {
    const notifications = startDatabaseNotifications((await testDatabase()).url, createLogger('silent'));
    const feed = startPostChangeFeed(notifications);
    const notHeard = (watch: { settled: Promise<unknown> }) => Promise.race([watch.settled, new Promise((resolve) => setTimeout(resolve, 300, 'nothing'))]);
    try {
      await feed.ready;
      const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
      const insert = (text: string, firstComment: string | null) =>
        h.db
          .insertInto('posts')
          .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text, status: 'publishing', first_comment_text: firstComment, first_comment_status: firstComment ? 'pending' : null })
          .returning('id')
          .executeTakeFirstOrThrow();
      const publish = (id: string) => h.db.updateTable('posts').set({ status: 'published', platform_post_id: `p-${id}` }).where('id', '=', id).execute();
      const [plain, withComment, unrecorded] = [await insert('recorded', null), await insert('recorded, comment pending', 'under it'), await insert('not recorded here', null)];
      const [plainWatch, commentWatch, unrecordedWatch] = [feed.watch(plain.id), feed.watch(withComment.id), feed.watch(unrecorded.id)];
      const recorded = feed.recording([plain.id, withComment.id, unrecorded.id]);
      // Committed while the recording is in flight: their NOTIFYs are heard first, and held.
      for (const row of [plain, withComment, unrecorded]) await publish(row.id);
      assert.equal(await notHeard(plainWatch), 'nothing', 'the NOTIFY of a recording in flight waits for the recording');
      const plainView = (await loadPostViews(h.db, [plain.id]))[0]!;
      const commentView = (await loadPostViews(h.db, [withComment.id]))[0]!;
      recorded([plainView, commentView]);
      assert.equal(await plainWatch.settled, 'settled');
      assert.deepEqual(plainWatch.view, plainView);
      // No view (the recording took another path): its held NOTIFY settles it as usual, to be read.
      assert.equal(await unrecordedWatch.settled, 'settled');
      assert.equal(unrecordedWatch.view, undefined);
      // Published with its first comment pending: neither the view nor the NOTIFY is the answer yet.
      assert.equal(await notHeard(commentWatch), 'nothing');
      await h.db.updateTable('posts').set({ first_comment_status: 'posted' }).where('id', '=', withComment.id).execute();
      assert.equal(await commentWatch.settled, 'settled');
      assert.equal(commentWatch.view, undefined);
      for (const watch of [plainWatch, commentWatch, unrecordedWatch]) watch.stop();
    } finally {
      feed.close();
      await notifications.close();
    }
  });

  it('the change feed listens again after its connection is cut, and the watches made meanwhile still settle', async () => {
    const notifications = startDatabaseNotifications((await testDatabase()).url, createLogger('silent'));
    const feed = startPostChangeFeed(notifications);
    try {
      await feed.ready;
      const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
      const row = await h.db
        .insertInto('posts')
        .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text: 'after the cut', status: 'publishing' })
        .returning('id')
        .executeTakeFirstOrThrow();
      const watch = feed.watch(row.id);
      let inDoubt = false;
      void watch.inDoubt.then(() => (inDoubt = true));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(inDoubt, false, 'a watch made while the feed listens is relied on');
      const listeners = () =>
        sql<{ pid: number }>`select pid from pg_stat_activity where application_name = 'herald-notifications' and query like 'LISTEN%'`.execute(h.db);
      const before = (await listeners()).rows.map((r) => r.pid);
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'herald-notifications'`.execute(h.db);
      // A change committed while the feed reconnects is never heard: the request must ask the workflow instead.
      await watch.inDoubt;
      // Every feed listening in this process was cut (the harness's too); wait until as many listen again.
      for (let i = 0; (await listeners()).rows.filter((r) => !before.includes(r.pid)).length < before.length; i++) {
        if (i > 200) throw new Error('the change feed did not listen again');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await h.db.updateTable('posts').set({ status: 'failed' }).where('id', '=', row.id).execute();
      await watch.settled;
      watch.stop();
    } finally {
      feed.close();
      await notifications.close();
    }
  });

  it('a watch made before the feed listens is in doubt at once; one made while it listens is not', async () => {
    const notifications = startDatabaseNotifications((await testDatabase()).url, createLogger('silent'));
    const feed = startPostChangeFeed(notifications);
    try {
      const watch = feed.watch('00000000-0000-4000-8000-000000000000');
      await watch.inDoubt;
      watch.stop();
      await feed.ready;
      const listening = feed.watch('00000000-0000-4000-8000-000000000000');
      const doubted = await Promise.race([listening.inDoubt.then(() => true), new Promise((resolve) => setTimeout(resolve, 100, false))]);
      assert.equal(doubted, false);
      listening.stop();
    } finally {
      feed.close();
      await notifications.close();
    }
  });

  it('isSettled: what an immediate publish waits for', () => {
    assert.equal(isSettled({ status: 'publishing', firstCommentStatus: null }), false);
    assert.equal(isSettled({ status: 'published', firstCommentStatus: 'pending' }), false);
    assert.equal(isSettled({ status: 'published', firstCommentStatus: null }), true);
    assert.equal(isSettled({ status: 'published', firstCommentStatus: 'failed' }), true);
    assert.equal(isSettled({ status: 'failed', firstCommentStatus: 'failed' }), true);
    assert.equal(isSettled({ status: 'deleted', firstCommentStatus: null }), true);
  });
});
