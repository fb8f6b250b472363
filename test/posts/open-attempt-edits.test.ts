import assert from 'node:assert/strict';
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
});
