import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { createActivities } from '../../activities';
import type { AccountRow } from '../../src/db/tables/accounts';
import { SCHEDULE_SPACING_MINUTES } from '../../src/platforms/capabilities';
import { cancelClaimed, recordFailedAttempt } from '../../src/posts/attempt-outcomes';
import { reconcilePosts } from '../../src/posts/reconcile';
import { findStuckPosts } from '../../src/posts/stuck';
import { firstCommentWorkflowId, postWorkflowId, startPublishWorkflow } from '../../src/posts/workflow-client';
import { createActivities as buildActivities } from '../../activities';
import { testConfig } from '../helpers/api';
import { createLogger } from '../../src/logger';
import { insertXAccount, testSealedBox } from './fixtures';
import { harnessActivities, startPostsHarness, type PostsHarness } from './harness';

/**
 * A first comment never left `pending` for ever (audit D, findings 2, 5 and 6), and an attempt whose request could
 * not be built never left open (finding 3).
 */
describe('Posts: first comments left pending, and attempts that fail before the send', function () {
  this.timeout(90_000);
  let h: PostsHarness;
  let x: AccountRow;
  let activities: ReturnType<typeof createActivities>;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    activities = harnessActivities(h);
  });
  after(async () => h?.stop());

  const tweetsWith = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text);
  const commentOf = (postId: string) =>
    h.db.selectFrom('posts').select(['status', 'first_comment_status', 'first_comment_error']).where('id', '=', postId).executeTakeFirstOrThrow();
  const chargesOf = async (postId: string) =>
    (await h.db.selectFrom('quota_reservations').select(['kind', 'state']).where('post_id', '=', postId).orderBy('kind').execute()).map((r) => `${r.kind}:${r.state}`);
  const eventsOf = async (postId: string) =>
    (await h.db.selectFrom('events').select(['type', 'data']).where(sql`data->>'id'`, '=', postId).orderBy('id').execute()).map((e) => ({
      type: e.type,
      comment: (e.data as { first_comment?: { status: string } | null }).first_comment?.status ?? null,
    }));
  let slot = 0;
  /** A time of its own for each scheduled post of the account (the 5-minute spacing rule). */
  const nextSlot = () => new Date(h.now().getTime() + (600 + slot++ * (SCHEDULE_SPACING_MINUTES + 1)) * 60_000).toISOString();

  /** The state a run lost right after recording its post leaves: `published`, its first comment `pending`, unmarked. */
  async function publishedWithCommentLeft(text: string, comment: string): Promise<string> {
    const row = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: x.id, platform: 'x', text, status: 'publishing', first_comment_text: comment, first_comment_status: 'pending' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const attempt = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(attempt.ok, true);
    assert.equal((await commentOf(row.id)).first_comment_status, 'pending');
    return row.id;
  }

  /** A scheduled post made by the API with its charges, its workflow stopped so the test moves it by hand. */
  async function scheduledByApi(text: string, comment: string): Promise<string> {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text, first_comment: comment, schedule_at: nextSlot() } });
    assert.equal(res.status, 201, res.text);
    await h.env.client.workflow.getHandle(postWorkflowId(res.body.data.id)).terminate('the test moves the post by hand');
    return res.body.data.id;
  }

  describe('finding 2: a published post whose first comment its run left', () => {
    it('a workflow whose claim finds the post already published sends the first comment instead of ending gone', async () => {
      const postId = await publishedWithCommentLeft('recorded, then the run was lost', 'the comment the lost run owed');
      // A group's attempt finding it published reports it taken, with the comment still due.
      const grouped = (await activities.publishGroupToPlatforms({ postIds: [postId], now: Date.now() }))[postId]!;
      assert.deepEqual(grouped.ok && [grouped.recorded, grouped.hasFirstComment], [true, true]);

      await startPublishWorkflow(h.reconcilerRuntime(), postId);
      assert.deepEqual(await h.settle(postId), { outcome: 'published', firstComment: 'posted' });
      assert.equal((await commentOf(postId)).first_comment_status, 'posted');
      assert.equal(tweetsWith('recorded, then the run was lost').length, 1, 'the post is never sent again');
      assert.equal(tweetsWith('the comment the lost run owed').length, 1);
    });

    it('the reconciler starts the comment of a post left minutes ago (once), fails one begun and abandoned as unconfirmed, and herald posts stuck lists them until then', async () => {
      const left = await publishedWithCommentLeft('published, comment left', 'left behind');
      const abandoned = await publishedWithCommentLeft('published, comment call lost', 'maybe posted');
      const fresh = await publishedWithCommentLeft('published just now', 'on its way');
      await h.db.updateTable('posts').set({ updated_at: sql`now() - interval '10 minutes'` }).where('id', '=', left).execute();
      await h.db.updateTable('posts').set({ first_comment_attempt_started_at: sql`now() - interval '20 minutes'` }).where('id', '=', abandoned).execute();

      const stuckIds = async (client: boolean) => (await findStuckPosts(h.db, client ? h.env.client : null)).map((p) => p.id).filter((id) => [left, abandoned, fresh].includes(id));
      assert.deepEqual((await stuckIds(true)).sort(), [left, abandoned].sort());
      assert.deepEqual((await stuckIds(false)).sort(), [left, abandoned].sort());
      const stuck = (await findStuckPosts(h.db, h.env.client)).find((p) => p.id === left)!;
      assert.deepEqual([stuck.status, stuck.workflow, stuck.reason], ['published', 'missing', 'the post is published but its first comment is still pending and no workflow is sending it']);

      const rt = h.reconcilerRuntime();
      const look = await reconcilePosts(rt);
      assert.ok(look.started.includes(firstCommentWorkflowId(left)), JSON.stringify(look));
      assert.ok(look.started.includes(firstCommentWorkflowId(abandoned)));
      assert.ok(!look.started.includes(firstCommentWorkflowId(fresh)), 'a comment its own run may still send is left alone');
      assert.equal(await h.env.client.workflow.getHandle(firstCommentWorkflowId(left)).result(), 'posted');
      assert.equal(await h.env.client.workflow.getHandle(firstCommentWorkflowId(abandoned)).result(), 'failed');

      assert.equal((await commentOf(left)).first_comment_status, 'posted');
      assert.equal(tweetsWith('left behind').length, 1);
      assert.deepEqual(await commentOf(abandoned), {
        status: 'published',
        first_comment_status: 'failed',
        first_comment_error: 'X did not confirm whether the first comment was published; check the account before sending it again.',
      });
      assert.equal(tweetsWith('maybe posted').length, 0, 'a comment whose call may have landed is never sent again unasked');
      assert.deepEqual(await stuckIds(true), []);
      const again = await reconcilePosts(rt);
      assert.ok(![left, abandoned].some((id) => again.started.includes(firstCommentWorkflowId(id))), 'settled comments are not looked at again');
    });
  });

  describe('finding 3: an error while the request is built', () => {
    const failingStore = () => {
      const base = h.reconcilerRuntime().mediaStore;
      return { ...base, loadForUser: async () => Promise.reject(new Error('media storage did not answer')) } as typeof base;
    };
    const withFailingStore = () =>
      buildActivities({ config: testConfig(), db: h.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, now: h.now, mediaStore: failingStore() } });

    async function publishingWithMedia(text: string, markedEarlier: boolean) {
      return (
        await h.db
          .insertInto('posts')
          .values({
            user_id: h.api.userId,
            account_id: x.id,
            platform: 'x',
            text,
            status: 'publishing',
            media: JSON.stringify([{ media_id: '00000000-0000-4000-8000-000000000001', alt: null }]) as never,
            publish_attempt_started_at: markedEarlier ? new Date() : null,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    }
    const markOf = async (postId: string) => (await h.db.selectFrom('posts').select('publish_attempt_started_at').where('id', '=', postId).executeTakeFirstOrThrow()).publish_attempt_started_at;

    it('is a retryable refusal with the mark closed, nothing sent; after an earlier call that never reported, the mark stays open through the retry', async () => {
      const failing = withFailingStore();
      const first = await publishingWithMedia('storage down at the first attempt', false);
      const refused = await failing.publishToPlatform({ postId: first, now: Date.now() });
      assert.deepEqual(refused.ok === false && 'message' in refused ? [refused.kind, refused.message] : refused, [
        'retryable',
        'Herald could not prepare the post for X (its media or its database did not answer); nothing was sent.',
      ]);
      assert.equal(await markOf(first), null, 'nothing was sent: the retry need not look first');
      assert.equal(tweetsWith('storage down at the first attempt').length, 0);

      const interrupted = await publishingWithMedia('storage down after a lost call', true);
      const again = await failing.publishToPlatform({ postId: interrupted, now: Date.now() });
      assert.equal(again.ok ? 'ok' : again.kind, 'retryable');
      assert.ok((await markOf(interrupted)) instanceof Date, 'the earlier call may have sent: its mark stays');
      await recordFailedAttempt(h.db, interrupted, { message: 'x', final: false, requeue: 'publishing', retryAt: Date.now() + 60_000 });
      assert.ok((await markOf(interrupted)) instanceof Date, 'a retry waits with the mark as the attempt left it');
      await recordFailedAttempt(h.db, interrupted, { message: 'x', final: true, requeue: 'publishing' });
      assert.equal(await markOf(interrupted), null);
    });
  });

  describe('finding 5: a published post deleted before its first comment went out', () => {
    it('its comment is failed with a sentence and its charge refunded, in the delete; a send that finds it deleted settles it too', async () => {
      const postId = await scheduledByApi('deleted before its comment', 'never sent');
      await h.db.updateTable('posts').set({ status: 'publishing' }).where('id', '=', postId).execute();
      assert.equal((await activities.publishToPlatform({ postId, now: Date.now() })).ok, true);
      assert.deepEqual(await chargesOf(postId), ['first_comment:reserved', 'post:spent', 'scheduled:spent']);
      const deleted = await h.api.request('DELETE', `/api/v1/posts/${postId}`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(await commentOf(postId), { status: 'deleted', first_comment_status: 'failed', first_comment_error: 'The post is no longer published, so its first comment was not sent' });
      assert.deepEqual(await chargesOf(postId), ['first_comment:refunded', 'post:spent', 'scheduled:spent']);
      assert.deepEqual((await eventsOf(postId)).filter((e) => e.type === 'post.deleted'), [{ type: 'post.deleted', comment: 'failed' }]);

      // A row deleted by a path that left its comment pending (rows from before this change): the workflow's send settles it.
      const legacy = await scheduledByApi('deleted, comment left pending', 'never sent either');
      await h.db.updateTable('posts').set({ status: 'publishing' }).where('id', '=', legacy).execute();
      assert.equal((await activities.publishToPlatform({ postId: legacy, now: Date.now() })).ok, true);
      await h.db.updateTable('posts').set({ status: 'deleted' }).where('id', '=', legacy).execute();
      assert.equal(await activities.publishFirstComment({ postId: legacy }), 'skipped');
      assert.deepEqual(await commentOf(legacy), { status: 'deleted', first_comment_status: 'failed', first_comment_error: 'The post is no longer published, so its first comment was not sent' });
      assert.deepEqual(await chargesOf(legacy), ['first_comment:refunded', 'post:spent', 'scheduled:spent']);
      assert.equal(tweetsWith('never sent either').length, 0);
    });
  });

  describe('finding 6: a scheduled post cancelled or deleted', () => {
    const cancelledComment = { first_comment_status: 'failed', first_comment_error: 'The post was cancelled before it was published, so its first comment was not sent' };

    it('DELETE of a scheduled post fails its first comment with a sentence in the same update; the post.deleted event shows it, no first_comment.failed', async () => {
      const postId = await scheduledByApi('deleted while scheduled', 'not for this one');
      const deleted = await h.api.request('DELETE', `/api/v1/posts/${postId}`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(await commentOf(postId), { status: 'deleted', ...cancelledComment });
      assert.deepEqual(await chargesOf(postId), ['first_comment:refunded', 'post:refunded', 'scheduled:refunded']);
      assert.deepEqual(await eventsOf(postId), [{ type: 'post.deleted', comment: 'failed' }]);
    });

    it('a claimed post cancelled with its account (cancelClaimed) fails its first comment too', async () => {
      const postId = await scheduledByApi('claimed, then its account was lost', 'not for this one either');
      await h.db.updateTable('posts').set({ status: 'publishing' }).where('id', '=', postId).execute();
      await cancelClaimed(h.db, postId, 'connection_lost');
      assert.deepEqual(await commentOf(postId), { status: 'deleted', ...cancelledComment });
      assert.deepEqual(await eventsOf(postId), [{ type: 'post.cancelled', comment: 'failed' }]);
    });
  });
});
