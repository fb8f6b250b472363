import assert from 'node:assert/strict';
import { sql } from 'kysely';
import * as attemptMarks from '../../src/posts/attempt-marks';
import * as attemptOutcomes from '../../src/posts/attempt-outcomes';
import { cancelScheduled } from '../../src/posts/removals';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * A scheduled post whose attempt may have reached the platform (X answered 503 to a create that landed: its mark stays
 * open, README "Posts") waits for its retry as `scheduled`. The retry looks for the earlier attempt's post by what was
 * sent; an edit of the text meanwhile made it look for the new text, miss the post that went out, and send a second.
 */
describe('Posts: editing a post whose earlier attempt may be live', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());

  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tweetsOf = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text);
  const landedThen503 = {
    kind: 'reply' as const,
    thenHandle: true,
    response: { status: 503, headers: { 'content-type': 'application/json' }, json: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } },
  };

  it('its text, media and configuration are refused (409 post_not_editable) until the retry has looked: it goes out once, as sent', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const at = new Date(h.now().getTime() + 10 * 60_000);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'sent while X answered 503', schedule_at: at.toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, landedThen503, 1);
    await h.env.sleep(10.5 * 60_000);
    const waiting = await row(id);
    assert.deepEqual([waiting.status, waiting.retry_count, waiting.publish_attempt_started_at !== null], ['scheduled', 1, true], 'waiting for its retry, its attempt open');
    assert.equal(tweetsOf('sent while X answered 503').length, 1, 'the create landed');

    for (const body of [{ text: 'sent while X answered 503, edited' }, { media_urls: [] }, { configuration: { x: {} } }]) {
      const edit = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body });
      assert.equal(edit.status, 409, `${JSON.stringify(body)}: ${edit.text}`);
      assert.equal(edit.body.error.code, 'post_not_editable');
      assert.match(edit.body.error.message, /did not report back/);
    }
    // What the look does not compare can still change.
    const comment = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { first_comment: 'a first comment added meanwhile' } });
    assert.equal(comment.status, 200, comment.text);

    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: 'posted' });
    const published = await row(id);
    assert.equal(published.text, 'sent while X answered 503');
    assert.equal(published.platform_post_id, tweetsOf('sent while X answered 503')[0]!.id, 'the post that landed is the one recorded');
    assert.equal(tweetsOf('sent while X answered 503').length, 1, 'not sent twice');
    assert.equal(tweetsOf('sent while X answered 503, edited').length, 0);
  });

  it('rescheduled past the look\'s 15 minutes, the retry still finds the post that landed: published once, not failed as unconfirmed', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const text = 'landed, then moved forty minutes on';
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: new Date(h.now().getTime() + 10 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, landedThen503, 1);
    await h.env.sleep(10.5 * 60_000);
    assert.deepEqual([(await row(id)).status, tweetsOf(text).length], ['scheduled', 1], 'the create landed; the post waits for its retry, its attempt open');

    await h.syncClock();
    const moved = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: new Date(h.now().getTime() + 40 * 60_000).toISOString() } });
    assert.equal(moved.status, 200, moved.text);
    // Forty minutes pass on X's clock and the database's (time skipping moves only the workflow's): the landed tweet
    // and the attempt's mark are that old when the retry looks.
    const landed = tweetsOf(text)[0]!;
    landed.created_at = new Date(Date.parse(landed.created_at) - 40 * 60_000).toISOString();
    await sql`update posts set publish_attempt_started_at = publish_attempt_started_at - interval '40 minutes',
      publish_attempt_first_at = publish_attempt_first_at - interval '40 minutes' where id = ${id}`.execute(h.db);

    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    const published = await row(id);
    assert.equal(published.platform_post_id, landed.id, 'the post that landed is the one recorded (it was failed: "X did not confirm")');
    assert.equal(tweetsOf(text).length, 1, 'not sent twice');
  });

  it('its DELETE is refused (409 post_not_editable) while the post may be live; once the retry has found it, DELETE deletes it on X', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const text = 'landed, then deleted by the user';
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: new Date(h.now().getTime() + 10 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const id: string = res.body.data.id;
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, landedThen503, 1);
    await h.env.sleep(10.5 * 60_000);
    assert.deepEqual([(await row(id)).status, tweetsOf(text).length], ['scheduled', 1], 'the create landed; the post waits for its retry, its attempt open');

    const refused = await h.api.request('DELETE', `/api/v1/posts/${id}`);
    assert.equal(refused.status, 409, `it was cancelled as never published, though live on X: ${refused.text}`);
    assert.equal(refused.body.error.code, 'post_not_editable');
    assert.match(refused.body.error.message, /did not report back/);
    assert.equal((await row(id)).status, 'scheduled', 'not cancelled');
    // The write itself holds to it (a DELETE whose read came before the requeue that left the mark open).
    assert.deepEqual(await cancelScheduled(h.db, { postIds: [id], reason: null, unlessMayBeLive: true }), []);

    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    assert.equal((await row(id)).platform_post_id, tweetsOf(text)[0]!.id, 'the retry found the post that landed');
    const deleted = await h.api.request('DELETE', `/api/v1/posts/${id}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual([(await row(id)).status, h.standIns.x.liveTweets().filter((t) => t.text === text).length], ['deleted', 0], 'deleted on X too');
  });

  it('the look reaches back to the earliest call still open: a later mark (a look a renewal stopped, a request not built) does not move it', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const { id } = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: account.id, platform: 'x', text: 'marked twice', status: 'publishing' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const firstOf = (marked: object) => (marked as { publish_attempt_first_at?: Date | null }).publish_attempt_first_at?.getTime();
    const first = (await attemptMarks.beginPublishAttempt(h.db, id))!;
    assert.equal(firstOf(first), first.publish_attempt_started_at!.getTime(), 'a first call: its own start');
    await sql`update posts set publish_attempt_started_at = publish_attempt_started_at - interval '40 minutes',
      publish_attempt_first_at = publish_attempt_first_at - interval '40 minutes' where id = ${id}`.execute(h.db);
    const again = (await attemptMarks.beginPublishAttempt(h.db, id))!;
    assert.equal(again.earlier_attempt_open, true);
    assert.equal(firstOf(again), first.publish_attempt_started_at!.getTime() - 40 * 60_000, 'the earlier call, still open, is the one looked for');
    assert.ok(again.publish_attempt_started_at!.getTime() > firstOf(again)! + 39 * 60_000, 'the mark itself is the latest call');
    await attemptOutcomes.clearPublishAttempt(h.db, id);
    const fresh = (await attemptMarks.beginPublishAttempt(h.db, id))!;
    assert.equal(firstOf(fresh), fresh.publish_attempt_started_at!.getTime(), 'once closed, the next call starts afresh');
  });
});
