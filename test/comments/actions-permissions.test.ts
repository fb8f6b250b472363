import assert from 'node:assert/strict';
import { refreshIfDue } from '../../src/comments/sync';
import { createLogger } from '../../src/logger';
import { graphErrors } from '../standins/graph';
import { insertXAccount, testSealedBox, refusalsTakenAsReal } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { comment, commentsConfig, connectAccount, publish, snapshot } from './actions-fixtures';

/** What comment actions and refreshes do to an account when a platform withholds a permission or refuses the credential. */
describe('comment actions: permissions and connections', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let facebook: { id: string };
  let threads: { id: string };

  before(async () => {
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig() });
    const { page } = h.standIns.facebook;
    facebook = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    threads = await connectAccount(h, { platform: 'threads', access_token: h.standIns.threads.user.token });
  });
  after(async () => h?.stop());
  afterEach(() => {
    for (const s of [h.standIns.x, h.standIns.facebook, h.standIns.threads]) s.standIn.clearFaults();
    h.standIns.facebook.permissions.add('pages_manage_engagement');
    h.standIns.threads.user.canManageReplies = true;
  });

  const path = (postId: string, commentId: string) => `/api/v1/posts/${postId}/comments/${commentId}`;
  const hide = (postId: string, commentId: string, hidden: boolean) => h.api.request('POST', `${path(postId, commentId)}/hide`, { body: { hidden } });
  const remove = (postId: string, commentId: string) => h.api.request('DELETE', path(postId, commentId));
  const stored = (id: string) => h.db.selectFrom('comments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('a withheld comment permission: 409 comment_permission_required, the account shows reauthorization_required and keeps posting; reconnecting clears it', async () => {
    const post = await publish(h, facebook.id, 'fb permission target');
    const visitor = h.standIns.facebook.addExternalComment(post.platform_post_id, 'please hide me');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'please hide me');
    h.standIns.facebook.permissions.delete('pages_manage_engagement');

    const res = await hide(post.id, c.id, true);
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.code, 'comment_permission_required');
    assert.match(res.body.error.message, /^Facebook refused to change the comment: Facebook has not granted Herald the permission this needs; reconnect the account\. .*reconnect the account from the dashboard\. Posting keeps working\.$/);
    assert.deepEqual([(await stored(c.id)).hidden, h.standIns.facebook.comments.get(visitor.id)!.is_hidden], [false, false], 'nothing changed');
    const account = await h.api.request('GET', `/api/v1/accounts/${facebook.id}`);
    assert.deepEqual([account.body.data.active, account.body.data.inactive_reason], [true, 'reauthorization_required']);

    await publish(h, facebook.id, 'posting keeps working');
    const calls = h.standIns.facebook.standIn.calls().length;
    const again = await remove(post.id, c.id);
    assert.deepEqual([again.status, again.body.error.code], [409, 'comment_permission_required']);
    assert.equal(h.standIns.facebook.standIn.calls().length, calls, 'refused before calling Facebook');

    h.standIns.facebook.permissions.add('pages_manage_engagement');
    const { page } = h.standIns.facebook;
    const reconnected = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    assert.deepEqual([reconnected.id, reconnected.inactive_reason], [facebook.id, null]);
    assert.equal((await hide(post.id, c.id, true)).status, 200);
  });

  it('threads: hiding without threads_manage_replies is 409 and marks the account; reconnecting clears it', async () => {
    const post = await publish(h, threads.id, 'threads permission target');
    h.standIns.threads.addExternalReply(post.platform_post_id, 'hide me on threads');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'hide me on threads');
    h.standIns.threads.user.canManageReplies = false;
    const res = await hide(post.id, c.id, true);
    assert.deepEqual([res.status, res.body.error.code], [409, 'comment_permission_required'], res.text);
    const account = await h.api.request('GET', `/api/v1/accounts/${threads.id}`);
    assert.deepEqual([account.body.data.active, account.body.data.inactive_reason], [true, 'reauthorization_required']);
    h.standIns.threads.user.canManageReplies = true;
    await connectAccount(h, { platform: 'threads', access_token: h.standIns.threads.user.token });
    assert.equal((await hide(post.id, c.id, true)).status, 200);
  });

  it('a credential the platform refuses outright on a comment action: 409, the account is connection_lost and its scheduled posts are cancelled', async () => {
    const lost = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await refusalsTakenAsReal(h.db, lost);
    const post = await publish(h, lost.id, 'x credential target', { first_comment: 'own words' });
    await h.syncClock();
    const scheduled = await h.api.request('POST', '/api/v1/posts', { body: { account_id: lost.id, text: 'later', schedule_at: new Date(h.now().getTime() + 3_600_000).toISOString() } });
    assert.equal(scheduled.status, 201, scheduled.text);
    h.standIns.x.standIn.inject(
      { method: 'DELETE' },
      { kind: 'reply', response: { status: 401, headers: { 'content-type': 'application/problem+json' }, json: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } } },
    );
    const res = await remove(post.id, post.first_comment!.comment_id!);
    assert.deepEqual(res.body, { error: { code: 'comment_permission_required', message: "X no longer accepts this account's credentials; reconnect the account." } });
    assert.equal(res.status, 409);
    const account = await h.db.selectFrom('accounts').select(['active', 'inactive_reason']).where('id', '=', lost.id).executeTakeFirstOrThrow();
    assert.deepEqual(account, { active: false, inactive_reason: 'connection_lost' });
    const cancelled = await h.db.selectFrom('posts').select(['status', 'error_message']).where('id', '=', scheduled.body.data.id).executeTakeFirstOrThrow();
    assert.deepEqual(cancelled, { status: 'deleted', error_message: 'connection_lost' });
    assert.equal((await stored(post.first_comment!.comment_id!)).deleted, false, 'nothing changed');
  });

  it('a disconnected account is "account not found or not active": 404 not_found on reply and delete, not 409 (which is for re-authorizing)', async () => {
    const gone = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const post = await publish(h, gone.id, 'x disconnect target', { first_comment: 'own words' });
    assert.equal((await h.api.request('DELETE', `/api/v1/accounts/${gone.id}`)).status, 200);
    const calls = h.standIns.x.standIn.calls().length;
    const removed = await remove(post.id, post.first_comment!.comment_id!);
    assert.deepEqual([removed.status, removed.body.error.code], [404, 'not_found'], removed.text);
    assert.match(removed.body.error.message, /^The X account of this post was disconnected; reconnect it to delete comments\.$/);
    const replied = await h.api.request('POST', `${path(post.id, post.first_comment!.comment_id!)}/reply`, { body: { text: 'hello' } });
    assert.deepEqual([replied.status, replied.body.error.code], [404, 'not_found'], replied.text);
    assert.equal(h.standIns.x.standIn.calls().length, calls, 'refused before calling X');
  });

  it('a refresh refused for a withheld permission marks the account reauthorization_required too; reconnecting clears it', async () => {
    const post = await publish(h, facebook.id, 'fb refresh permission target');
    h.standIns.facebook.standIn.inject({ method: 'GET', path: /\/comments$/ }, { kind: 'reply', response: graphErrors.permission() });
    const deps = { db: h.db, logger: createLogger('silent'), adapters: h.standIns.adapters, sealedBox: testSealedBox };
    await refreshIfDue(deps, { postId: post.id, mode: 'true', now: Date.now() });
    const state = await h.db.selectFrom('comment_sync_states').select('status').where('post_id', '=', post.id).executeTakeFirstOrThrow();
    assert.equal(state.status, 'permission');
    const account = await h.api.request('GET', `/api/v1/accounts/${facebook.id}`);
    assert.deepEqual([account.body.data.active, account.body.data.inactive_reason], [true, 'reauthorization_required']);
    await publish(h, facebook.id, 'still posting after a refused refresh');
    const { page } = h.standIns.facebook;
    assert.equal((await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token })).inactive_reason, null);
  });
});
