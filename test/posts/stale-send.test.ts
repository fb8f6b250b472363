import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import type { PublishAttempt } from '../../activities/posts';
import { createLogger } from '../../src/logger';
import { testConfig } from '../helpers/api';
import { platformCallInfo } from '../helpers/temporal';
import { insertThreadsAccount, testSealedBox } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * A platform call that outlived its activity's time limit must never go on to create a post (README "Posts",
 * 2026-12-07 late night). The workflow hears of the time limit and calls again: that call finds the mark open, looks,
 * finds nothing yet and sends. The old call, its chain before the create still running (here Threads' quota read,
 * answered late; in production X's STATUS polls or Graph's container polls), then reached its create and published a
 * second copy. Now no create begins after the activity's limit less the request timeout and a margin
 * (`src/platforms/send-stop.ts`), shortened here (`sendLimits`) so that a 2-second limit leaves 1 second of room.
 */
describe('Posts: a call that outlived its time limit sends nothing after the retry looked', function () {
  this.timeout(60_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());

  it('the old call stops before its create, reports nothing sent; the retry publishes once', async () => {
    const th = h.standIns.threads;
    const account = await insertThreadsAccount(h.db, h.api.userId, th);
    const text = 'sent once though its first call hung past its limit';
    const { id: postId } = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: account.id, platform: 'threads', text, status: 'publishing' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const activities = createActivities({
      config: testConfig(),
      db: h.db,
      logger: createLogger('silent'),
      posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, now: h.now, sendLimits: { requestTimeoutMs: 500, marginMs: 500 } },
    });
    const publishes = () => th.standIn.calls('POST', /\/threads_publish$/).length;
    const before = publishes();

    // The first call's chain is slow before its create: its quota read answers after 3 s (its limit is 2 s).
    th.standIn.inject({ method: 'GET', path: /threads_publishing_limit$/ }, { kind: 'delay', ms: 3_000 });
    const limitMs = 2_000;
    const first = new MockActivityEnvironment({ startToCloseTimeoutMs: limitMs }).run(activities.publishToPlatform, { postId, now: Date.now() }) as Promise<PublishAttempt>;
    // At its limit the workflow hears of the timeout and calls again: the mark is open, so it looks, finds nothing, sends.
    await new Promise((done) => setTimeout(done, limitMs));
    const retry = (await new MockActivityEnvironment(platformCallInfo()).run(activities.publishToPlatform, { postId, now: Date.now() })) as PublishAttempt;
    assert.equal(retry.ok, true, JSON.stringify(retry));
    assert.equal(publishes(), before + 1);

    // The hung call ends without a create: it was past its last instant to begin one.
    const stale = await first;
    assert.equal(publishes(), before + 1, 'the call that outlived its limit published a second copy');
    assert.deepEqual(stale.ok === false && 'message' in stale ? [stale.kind, stale.message] : stale, [
      'retryable',
      'Threads: Herald stopped this attempt before sending it, as its time was up; nothing was published.',
    ]);
    assert.equal([...th.posts.values()].filter((p) => p.text === text).length, 1);
    const row = await h.db.selectFrom('posts').select(['status', 'platform_post_id']).where('id', '=', postId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'published');
  });
});
