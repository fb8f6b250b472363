import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { insertMastodonAccount, refusalsTakenAsReal } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * Mastodon cannot be asked whether a create landed; its Idempotency-Key makes a repeat safe, but the server keeps it
 * an hour only (protocols.md section 3). A create that met server errors (the status made, the answers lost) closed
 * the attempt's mark, so a retry moved past the hour (a reschedule, a long wait) was sent with neither look nor a key
 * the server still knew: a second status. Now the mark stays open, the retry repeats the key while it lasts, and past
 * it the post is failed with the reason, never sent blindly.
 */
describe('Posts: a Mastodon create that may have landed, retried within and past its Idempotency-Key\'s hour', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());

  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const statusesOf = (text: string) => h.standIns.mastodon.liveStatuses().filter((s) => s.text === text);
  const serverError = { status: 503, headers: { 'content-type': 'application/json' }, json: { error: 'Service Unavailable' } };

  /** A scheduled post whose create lands but is answered 503, and whose immediate repeat meets a 503 too. */
  async function landedUnanswered(text: string): Promise<string> {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: new Date(h.now().getTime() + 10 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const statuses = { method: 'POST', path: '/api/v1/statuses' };
    h.standIns.mastodon.standIn.inject(statuses, { kind: 'reply', thenHandle: true, response: serverError }, 1);
    h.standIns.mastodon.standIn.inject(statuses, { kind: 'reply', response: serverError }, 1);
    await h.env.sleep(10.5 * 60_000);
    const waiting = await row(res.body.data.id);
    assert.deepEqual([waiting.status, waiting.retry_count, statusesOf(text).length], ['scheduled', 1, 1], 'the create landed; the post waits for its retry');
    assert.notEqual(waiting.publish_attempt_started_at, null, 'its attempt stays open: the status may be live');
    return res.body.data.id;
  }

  it('within the hour the retry repeats the key: the status that landed is recorded, one status', async () => {
    const text = 'landed on mastodon, answered 503, retried';
    const id = await landedUnanswered(text);
    assert.deepEqual(await h.settle(id), { outcome: 'published', firstComment: null });
    assert.equal((await row(id)).platform_post_id, statusesOf(text)[0]!.id);
    assert.equal(statusesOf(text).length, 1, 'not sent twice');
  });

  it('past the hour it is not sent again: failed with the reason, one status', async () => {
    const text = 'landed on mastodon, answered 503, retried after the hour';
    const id = await landedUnanswered(text);
    // An hour passes on the server's clock and the database's (time skipping moves only the workflow's): a retry moved
    // on, or a long wait.
    h.standIns.mastodon.ageIdempotencyKeys(61 * 60_000);
    await sql`update posts set publish_attempt_started_at = publish_attempt_started_at - interval '61 minutes',
      publish_attempt_first_at = publish_attempt_first_at - interval '61 minutes' where id = ${id}`.execute(h.db);
    assert.deepEqual(await h.settle(id), { outcome: 'failed' });
    assert.equal(statusesOf(text).length, 1, 'not sent a second time without a key the server still knows');
    const failed = await row(id);
    assert.match(failed.error_message ?? '', /^Mastodon did not confirm whether the post was published, and it guards against a second copy for only 60 minutes/);
    assert.equal(failed.publish_attempt_started_at, null);
  });

  /** A scheduled post whose create lands but is answered 503, and whose immediate repeat is refused 401. */
  async function landedThenRefused(text: string, options: { refusalTakenAsReal: boolean }): Promise<string> {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    if (options.refusalTakenAsReal) await refusalsTakenAsReal(h.db, account);
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text, schedule_at: new Date(h.now().getTime() + 10 * 60_000).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const statuses = { method: 'POST', path: '/api/v1/statuses' };
    h.standIns.mastodon.standIn.inject(statuses, { kind: 'reply', thenHandle: true, response: serverError }, 1);
    h.standIns.mastodon.standIn.inject(statuses, { kind: 'reply', response: { status: 401, headers: { 'content-type': 'application/json' }, json: { error: 'The access token is invalid' } } }, 1);
    await h.settle(res.body.data.id);
    return res.body.data.id;
  }

  it('a create answered 503 whose repeat is refused 401, the loss confirmed: failed saying it may be live, not cancelled as never sent', async () => {
    const text = 'landed on mastodon, then the token refused';
    const failed = await row(await landedThenRefused(text, { refusalTakenAsReal: true }));
    assert.deepEqual([failed.status, statusesOf(text).length], ['failed', 1], `it was cancelled as never sent though live: ${failed.status} ${failed.error_message}`);
    assert.match(failed.error_message ?? '', /may already be on the platform, and the platform stopped accepting the account's credential before Herald could check/);
  });

  it('a create answered 503 whose repeat meets a first 401 (held: maybe Mastodon\'s fault): retried under the same key, published once', async () => {
    const text = 'landed on mastodon, then one refusal';
    const post = await row(await landedThenRefused(text, { refusalTakenAsReal: false }));
    assert.deepEqual([post.status, statusesOf(text).length], ['published', 1], `${post.status} ${post.error_message}`);
  });
});
