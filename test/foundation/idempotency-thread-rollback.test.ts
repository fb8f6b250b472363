import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { insertXAccount, xAnswers } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * A thread that failed part-way and left parts live (502 `thread_rollback_incomplete`) changed something: "retrying
 * without deleting them publishes them twice" (publishing-api.md). With an Idempotency-Key that retry must get the
 * original answer replayed, not a second run of the thread.
 */
describe('Idempotency-Key: a thread_rollback_incomplete is replayed, never run again', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  it('the retry with the same key answers the stored 502 with Idempotent-Replay: true and publishes nothing', async () => {
    const texts = [1, 2, 3].map((n) => `replayed incomplete ${n}`);
    const tweets = { method: 'POST', path: '/2/tweets' };
    // Parts 1 and 2 go out, part 3 is refused; the rollback's delete of part 2 is refused too, so part 2 stays live.
    h.standIns.x.standIn.inject(tweets, { kind: 'delay', ms: 0 }, 2);
    h.standIns.x.standIn.inject(tweets, {
      kind: 'reply',
      response: { status: 403, headers: { 'content-type': 'application/json' }, json: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 } },
    });
    h.standIns.x.standIn.inject({ method: 'DELETE', path: /^\/2\/tweets\// }, xAnswers.deleteRefused);
    const headers = { 'Idempotency-Key': `thread-incomplete-${Date.now()}` };
    const body = { account_id: x.id, posts: texts.map((text) => ({ text })) };

    const first = await h.api.request('POST', '/api/v1/threads', { body, headers });
    assert.equal(first.status, 502, first.text);
    assert.equal(first.body.error.code, 'thread_rollback_incomplete');
    const sent = () => h.standIns.x.tweets().filter((t) => texts.includes(t.text)).length;
    const sentBefore = sent();
    assert.equal(sentBefore, 2);

    // The platform would take the thread now: a second run would publish all three parts, part 2 twice.
    h.standIns.x.standIn.clearFaults();
    const again = await h.api.request('POST', '/api/v1/threads', { body, headers });
    assert.equal(again.status, 502, again.text);
    assert.equal(again.headers.get('idempotent-replay'), 'true');
    assert.equal(again.text, first.text);
    assert.equal(sent(), sentBefore, 'nothing more was published');
  });
});
