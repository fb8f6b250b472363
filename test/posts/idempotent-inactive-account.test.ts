import assert from 'node:assert/strict';
import { comment, commentsConfig, connectAccount, publish, snapshot } from '../comments/actions-fixtures';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * The 404 of an account switched off (or disconnected, or its connection lost) passes once the account is switched on
 * or reconnected, so a request refused so with an Idempotency-Key is not kept for replay: the retry with the same key
 * runs (api/idempotency.ts `keptForReplay`). The 404 of an account that is absent is kept as before.
 */
describe('Idempotency-Key: a 404 for an account not active is not replayed', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  before(async () => {
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig() });
  });
  after(async () => h?.stop());

  const switchTo = async (accountId: string, active: boolean) => {
    const res = await h.api.request('PATCH', `/api/v1/accounts/${accountId}`, { body: { active } });
    assert.equal(res.status, 200, res.text);
  };

  it('a create refused for an account switched off runs again with the same key once it is switched on', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await switchTo(account.id, false);
    const send = () => h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'once it is on' }, headers: { 'Idempotency-Key': `off-${account.id}` } });

    const refused = await send();
    assert.deepEqual([refused.status, refused.body], [404, { error: { code: 'not_found', message: `Account ${account.id} is not active` } }]);
    await switchTo(account.id, true);
    const created = await send();
    assert.deepEqual([created.status, created.headers.get('idempotent-replay')], [201, null], created.text);
    assert.equal(created.body.data.status, 'published');
    const replayed = await send();
    assert.deepEqual([replayed.status, replayed.headers.get('idempotent-replay'), replayed.body], [201, 'true', created.body]);
  });

  it('a first-comment retry refused for an account switched off runs again with the same key once it is switched on', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const earlier = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'said first on this account' } });
    const post = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'a post of its own', first_comment: 'said first on this account' } });
    assert.equal(post.body.data.first_comment.status, 'failed', post.text);
    await h.api.request('DELETE', `/api/v1/posts/${earlier.body.data.id}`); // the duplicate gone, the comment can pass
    await switchTo(account.id, false);
    const retry = () => h.api.request('POST', `/api/v1/posts/${post.body.data.id}/first-comment`, { headers: { 'Idempotency-Key': `retry-${post.body.data.id}` } });

    const refused = await retry();
    assert.deepEqual([refused.status, refused.body.error.code], [404, 'not_found'], refused.text);
    await switchTo(account.id, true);
    const retried = await retry();
    assert.deepEqual([retried.status, retried.headers.get('idempotent-replay')], [200, null], retried.text);
    assert.equal(retried.body.data.first_comment.status, 'posted');
  });

  it('a comment reply refused for an account switched off runs again with the same key once it is switched on', async () => {
    const { page } = h.standIns.facebook;
    const facebook = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    const post = await publish(h, facebook.id, 'a post with a question under it');
    h.standIns.facebook.addExternalComment(post.platform_post_id, 'a question');
    await snapshot(h, post.id);
    const question = await comment(h, post.id, 'a question');
    await switchTo(facebook.id, false);
    const reply = () => h.api.request('POST', `/api/v1/posts/${post.id}/comments/${question.id}/reply`, { body: { text: 'an answer' }, headers: { 'Idempotency-Key': `reply-${question.id}` } });

    const refused = await reply();
    assert.deepEqual([refused.status, refused.body], [404, { error: { code: 'not_found', message: `Account ${facebook.id} is not active; activate it to reply from it.` } }]);
    await switchTo(facebook.id, true);
    const replied = await reply();
    assert.deepEqual([replied.status, replied.headers.get('idempotent-replay')], [201, null], replied.text);
  });

  it('a create refused for a disconnected account runs again with the same key once it is reconnected (same id)', async () => {
    const { page } = h.standIns.facebook;
    const facebook = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    const gone = await h.api.request('DELETE', `/api/v1/accounts/${facebook.id}`);
    assert.equal(gone.status, 200, gone.text);
    const send = () => h.api.request('POST', '/api/v1/posts', { body: { account_id: facebook.id, text: 'once reconnected' }, headers: { 'Idempotency-Key': `gone-${facebook.id}` } });

    const refused = await send();
    assert.deepEqual([refused.status, refused.body.error.message], [404, `Account ${facebook.id} is not active`]);
    const again = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    assert.equal(again.id, facebook.id);
    const created = await send();
    assert.deepEqual([created.status, created.headers.get('idempotent-replay')], [201, null], created.text);
  });

  it('a create refused for an account that does not exist is still replayed', async () => {
    const unknown = '00000000-0000-4000-8000-0000000000aa';
    const send = () => h.api.request('POST', '/api/v1/posts', { body: { account_id: unknown, text: 'nowhere' }, headers: { 'Idempotency-Key': 'absent-account' } });
    const refused = await send();
    assert.deepEqual([refused.status, refused.body.error.message], [404, `Account ${unknown} was not found`]);
    const again = await send();
    assert.deepEqual([again.status, again.headers.get('idempotent-replay'), again.body], [404, 'true', refused.body]);
  });
});
