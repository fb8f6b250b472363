import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { sql } from 'kysely';
import type { PoolClient } from 'pg';
import { beginFirstCommentAttempt, reopenFirstComment } from '../../src/posts/first-comment-repository';
import { loadLimits, reserveQuota, usageFor } from '../../src/quota/quota';
import { insertXAccount, xAnswers, refusalsTakenAsReal } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

describe('PATCH, first comments and account lifecycle', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'free' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const inMinutes = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000);
  const row = (id: string) => h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tweetsStartingWith = (text: string) => h.standIns.x.liveTweets().filter((t) => t.text.startsWith(text));

  it('rescheduling later moves the timer: nothing at the old time, the edited text at the new one', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'draft wording', schedule_at: inMinutes(60).toISOString() } });
    const id = res.body.data.id;
    const later = inMinutes(120);
    const patched = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { text: 'final wording', schedule_at: later.toISOString() } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      [patched.body.data.text, patched.body.data.scheduled_at, patched.body.data.status, patched.body.data.rescheduled_post_ids],
      ['final wording', later.toISOString(), 'scheduled', [id]],
    );
    await h.env.sleep('61 minutes');
    assert.equal((await row(id)).status, 'scheduled');
    assert.equal(tweetsStartingWith('final wording').length + tweetsStartingWith('draft wording').length, 0);
    await h.settle(id);
    const published = await row(id);
    assert.equal(published.status, 'published');
    assert.ok(published.published_at!.getTime() >= later.getTime());
    assert.equal(tweetsStartingWith('final wording').length, 1);
  });

  it('rescheduling earlier wakes the workflow: it publishes at the new, earlier time', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'moved up', schedule_at: inMinutes(180).toISOString() } });
    const id = res.body.data.id;
    const sooner = inMinutes(30);
    const patched = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { schedule_at: sooner.toISOString() } });
    assert.equal(patched.status, 200, patched.text);
    await h.settle(id);
    const published = await row(id);
    assert.ok(published.published_at!.getTime() >= sooner.getTime() && published.published_at!.getTime() < sooner.getTime() + 60_000);
  });

  it('answers 409 post_not_editable for a published post and 400 for an empty change', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'done deal' } });
    const published = await h.api.request('PATCH', `/api/v1/posts/${res.body.data.id}`, { body: { text: 'too late' } });
    assert.deepEqual(published.body, { error: { code: 'post_not_editable', message: 'The post is published; only scheduled posts and drafts can be edited' } });
    assert.equal(published.status, 409);
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'idle', draft: true } });
    const empty = await h.api.request('PATCH', `/api/v1/posts/${draft.body.data.id}`, { body: {} });
    assert.deepEqual(empty.body, { error: { code: 'bad_request', message: 'Nothing to change: send at least one field to update' } });
  });

  it('promotes a draft with publish: true into a new post; the draft then answers 409', async () => {
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'promote me', draft: true } });
    const draftId = draft.body.data.id;
    const edited = await h.api.request('PATCH', `/api/v1/posts/${draftId}`, { body: { text: 'promote me now' } });
    assert.equal(edited.body.data.status, 'draft');
    assert.deepEqual(edited.body.data.warnings, []);
    const promoted = await h.api.request('PATCH', `/api/v1/posts/${draftId}`, { body: { publish: true } });
    assert.equal(promoted.status, 200, promoted.text);
    assert.notEqual(promoted.body.data.id, draftId);
    assert.deepEqual([promoted.body.data.status, promoted.body.data.promoted_from_draft_id, promoted.body.data.text], ['published', draftId, 'promote me now']);
    assert.equal(tweetsStartingWith('promote me now').length, 1);
    const again = await h.api.request('PATCH', `/api/v1/posts/${draftId}`, { body: { publish: true } });
    assert.deepEqual(again.body, { error: { code: 'post_not_editable', message: 'The draft was already promoted; edit the post it became' } });
    // The promoted draft is gone (publishing-api.md "Post status"): read under its id it is absent, as in listings.
    const gone = [404, { error: { code: 'not_found', message: `Post ${draftId} was not found` } }];
    const read = await h.api.request('GET', `/api/v1/posts/${draftId}`);
    assert.deepEqual([read.status, read.body], gone);
    assert.equal((await h.api.request('GET', `/api/v1/posts/${promoted.body.data.id}`)).body.data.promoted_from_draft_id, draftId);
    // Its comments and analytics are gone with it (they answered 200 "not published yet" and 400 "is draft").
    for (const [method, path, body] of [
      ['GET', `/api/v1/posts/${draftId}/comments`, undefined],
      ['POST', `/api/v1/posts/${draftId}/comments/${randomUUID()}/hide`, { hidden: true }],
      ['GET', `/api/v1/analytics/posts/${draftId}`, undefined],
    ] as const) {
      const answer = await h.api.request(method, path, { body });
      assert.deepEqual([answer.status, answer.body], gone, `${method} ${path}`);
    }
  });

  it('a promotion the platform refuses answers 502, keeps the failed post with its quota refunded, and leaves the draft a draft', async () => {
    const first = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'said only once' } });
    assert.equal(first.status, 201, first.text);
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'said only once', draft: true } });
    const draftId = draft.body.data.id;
    const before = await usageFor(h.db, h.api.userId, h.now());
    const refused = await h.api.request('PATCH', `/api/v1/posts/${draftId}`, { body: { publish: true } });
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.error.code, 'upstream_error');
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before, 'the refused attempt was refunded');
    const attempt = await h.db.selectFrom('posts').select(['status', 'error_message']).where('promoted_from_draft_id', '=', draftId).execute();
    assert.deepEqual(attempt, [{ status: 'failed', error_message: refused.body.error.message }]);

    assert.deepEqual([(await row(draftId)).status, (await row(draftId)).promoted_to_id], ['draft', null]);
    const read = await h.api.request('GET', `/api/v1/posts/${draftId}`);
    assert.deepEqual([read.status, read.body.data.status, read.body.data.text], [200, 'draft', 'said only once']);
    const drafts = await h.api.request('GET', '/api/v1/posts?status=draft&limit=100');
    assert.ok(drafts.body.data.some((p: { id: string }) => p.id === draftId), 'the draft is listed again');
    const edited = await h.api.request('PATCH', `/api/v1/posts/${draftId}`, { body: { text: 'said only once, then reworded' } });
    assert.deepEqual([edited.status, edited.body.data.status], [200, 'draft']);

    const promoted = await h.api.request('PATCH', `/api/v1/posts/${draftId}`, { body: { publish: true } });
    assert.equal(promoted.status, 200, promoted.text);
    assert.deepEqual([promoted.body.data.status, promoted.body.data.promoted_from_draft_id, promoted.body.data.text], ['published', draftId, 'said only once, then reworded']);
    assert.equal((await usageFor(h.db, h.api.userId, h.now())).posts - before.posts, 1);
    assert.equal((await row(draftId)).promoted_to_id, promoted.body.data.id);
  });

  it('a refused promotion leaves the draft unchanged and charges nothing', async () => {
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'see https://example.org', draft: true } });
    const before = await usageFor(h.db, h.api.userId, h.now());
    const refused = await h.api.request('PATCH', `/api/v1/posts/${draft.body.data.id}`, { body: { publish: true } });
    assert.equal(refused.status, 402);
    const after = await row(draft.body.data.id);
    assert.deepEqual([after.status, after.promoted_to_id], ['draft', null]);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
  });

  it('a draft\'s warnings are the answer of a save: GET has none, PATCH {draft: true} answers them again and changes nothing', async () => {
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'see https://example.net', draft: true } });
    assert.equal(draft.status, 201, draft.text);
    const codes = (res: { body: { data: { warnings?: Array<{ code: string }> } } }) => res.body.data.warnings?.map((w) => w.code);
    assert.deepEqual(codes(draft), ['x_link_posts_require_paid_plan']);
    const read = await h.api.request('GET', `/api/v1/posts/${draft.body.data.id}`);
    assert.equal('warnings' in read.body.data, false);
    const saved = await h.api.request('PATCH', `/api/v1/posts/${draft.body.data.id}`, { body: { draft: true } });
    assert.equal(saved.status, 200, saved.text);
    assert.deepEqual(codes(saved), ['x_link_posts_require_paid_plan']);
    assert.deepEqual([saved.body.data.status, saved.body.data.text], ['draft', 'see https://example.net']);
  });

  it('promotes a draft with schedule_at into a scheduled post', async () => {
    await h.syncClock();
    const draft = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'for later', draft: true } });
    const at = inMinutes(400);
    const promoted = await h.api.request('PATCH', `/api/v1/posts/${draft.body.data.id}`, { body: { schedule_at: at.toISOString() } });
    assert.equal(promoted.status, 200, promoted.text);
    assert.deepEqual([promoted.body.data.status, promoted.body.data.scheduled_at, promoted.body.data.rescheduled_post_ids], ['scheduled', at.toISOString(), [promoted.body.data.id]]);
    await h.api.request('DELETE', `/api/v1/posts/${promoted.body.data.id}`);
  });

  it('posts the first comment under the post and reports it; it counts as a post', async () => {
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'with a comment', first_comment: 'the comment' } });
    assert.equal(res.status, 201, res.text);
    // The comment is stored at once as the post's own comment (decisions.md "Comments"); comment_id names it.
    const stored = await h.db.selectFrom('comments').select('id').where('post_id', '=', res.body.data.id).where('own', '=', true).executeTakeFirstOrThrow();
    assert.deepEqual(res.body.data.first_comment, { text: 'the comment', status: 'posted', comment_id: stored.id, error: null });
    const reply = tweetsStartingWith('the comment')[0];
    assert.deepEqual(reply?.referenced_tweets, [{ type: 'replied_to', id: res.body.data.platform_post_id }]);
    assert.equal((await usageFor(h.db, h.api.userId, h.now())).posts - before.posts, 2);
  });

  it('a failed first comment never fails the post; the retry route re-sends it (Idempotency-Key replays)', async () => {
    const first = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'same words twice' } });
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'a post', first_comment: 'same words twice' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.status, 'published');
    assert.equal(res.body.data.first_comment.status, 'failed');
    assert.equal(res.body.data.first_comment.error, 'X refused the post as a duplicate of one already on the account.');
    assert.equal((await usageFor(h.db, h.api.userId, h.now())).posts - before.posts, 1, 'the failed comment was refunded');

    const stillFailing = await h.api.request('POST', `/api/v1/posts/${res.body.data.id}/first-comment`);
    assert.deepEqual(stillFailing.body, { error: { code: 'first_comment_failed', message: 'X refused the post as a duplicate of one already on the account.' } });
    assert.equal(stillFailing.status, 502);

    await h.api.request('DELETE', `/api/v1/posts/${first.body.data.id}`);
    const headers = { 'Idempotency-Key': `retry-${res.body.data.id}` };
    const retried = await h.api.request('POST', `/api/v1/posts/${res.body.data.id}/first-comment`, { headers });
    assert.equal(retried.status, 200, retried.text);
    const stored = await h.db.selectFrom('comments').select('id').where('post_id', '=', res.body.data.id).where('own', '=', true).executeTakeFirstOrThrow();
    assert.deepEqual(retried.body.data.first_comment, { text: 'same words twice', status: 'posted', comment_id: stored.id, error: null });
    const replayed = await h.api.request('POST', `/api/v1/posts/${res.body.data.id}/first-comment`, { headers });
    assert.equal(replayed.headers.get('idempotent-replay'), 'true');
    assert.deepEqual(replayed.body, retried.body);
    const posted = await h.api.request('POST', `/api/v1/posts/${res.body.data.id}/first-comment`);
    assert.deepEqual(posted.body, { error: { code: 'first_comment_not_retryable', message: 'The first comment is already posted' } });
    const none = await h.api.request('POST', `/api/v1/posts/${first.body.data.id}/first-comment`);
    assert.deepEqual(none.body, { error: { code: 'first_comment_not_found', message: 'This post has no first comment to retry' } });
  });

  /** A published post whose first comment failed (X refused it as a duplicate): its id, and the post that was duplicated. */
  async function postWithFailedComment(words: string): Promise<{ id: string; duplicated: string }> {
    const first = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: words } });
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: `under ${words}`, first_comment: words } });
    assert.equal(res.body.data.first_comment.status, 'failed', res.text);
    return { id: res.body.data.id, duplicated: first.body.data.id };
  }

  it('a retried first comment whose process died is in flight for 15 minutes, then failed as unconfirmed with its quota returned', async () => {
    const { id, duplicated } = await postWithFailedComment('abandoned retry words');
    await h.api.request('DELETE', `/api/v1/posts/${duplicated}`);
    const before = await usageFor(h.db, h.api.userId, h.now());
    // What a retry leaves when its process dies after marking its call: claimed, reserved, marked, never settled.
    await h.db.transaction().execute(async (trx) => {
      assert.equal(await reopenFirstComment(trx, id), true);
      await reserveQuota(trx, { userId: h.api.userId, limits: await loadLimits(h.db, h.api.userId), now: h.now(), charges: [{ postId: id, kind: 'first_comment' }] });
    });
    assert.ok(await beginFirstCommentAttempt(h.db, id));
    assert.equal((await usageFor(h.db, h.api.userId, h.now())).posts, before.posts + 1);

    const inFlight = await h.api.request('POST', `/api/v1/posts/${id}/first-comment`);
    assert.deepEqual([inFlight.status, inFlight.body.error.code], [409, 'first_comment_not_retryable']);

    await h.db.updateTable('posts').set({ first_comment_attempt_started_at: sql<Date>`now() - interval '16 minutes'` }).where('id', '=', id).execute();
    const settled = await h.api.request('POST', `/api/v1/posts/${id}/first-comment`);
    assert.equal(settled.status, 502, settled.text);
    const unconfirmed = 'X did not confirm whether the first comment was published; check the account before sending it again.';
    assert.deepEqual(settled.body.error, { code: 'first_comment_failed', message: unconfirmed });
    assert.deepEqual([(await row(id)).first_comment_status, (await row(id)).first_comment_error], ['failed', unconfirmed]);
    assert.equal((await usageFor(h.db, h.api.userId, h.now())).posts, before.posts, 'its quota returned');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'abandoned retry words').length, 1, 'only the duplicated post: nothing sent unasked');

    const retried = await h.api.request('POST', `/api/v1/posts/${id}/first-comment`);
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.body.data.first_comment.status, 'posted');
  });

  it('a first comment retried while its post is deleted is not sent: 409, failed, its quota returned', async () => {
    const { id, duplicated } = await postWithFailedComment('deleted under the retry');
    await h.api.request('DELETE', `/api/v1/posts/${duplicated}`);
    const before = await usageFor(h.db, h.api.userId, h.now());
    const sent = h.standIns.x.tweets().length;
    // The retry reads the post published, then waits for the row a DELETE holds, which commits the post deleted.
    const holder: PoolClient = await h.api.deps.pool.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from posts where id = $1 for update', [id]);
      const answer = h.api.request('POST', `/api/v1/posts/${id}/first-comment`);
      for (let waited = 0; ; waited += 20) {
        const { rows } = await h.api.deps.pool.query<{ n: string }>(`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock'`);
        if (Number(rows[0]!.n) >= 1) break;
        assert.ok(waited < 20_000, 'the retry waits for the row');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await holder.query(`update posts set status = 'deleted' where id = $1`, [id]);
      await holder.query('commit');
      const res = await answer;
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error.code, 'first_comment_not_retryable');
    } finally {
      holder.release();
    }
    assert.deepEqual([(await row(id)).first_comment_status, (await row(id)).first_comment_error], ['failed', 'The post is no longer published, so its first comment was not sent']);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    assert.equal(h.standIns.x.tweets().length, sent);
  });

  it('a first comment retried on an account switched off is 404 not_found: nothing reserved, nothing sent, still failed', async () => {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'said before on this account' } });
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'a post of its own', first_comment: 'said before on this account' } });
    assert.equal(res.body.data.first_comment.status, 'failed', res.text);
    const off = await h.api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } });
    assert.equal(off.status, 200, off.text);
    const before = await usageFor(h.db, h.api.userId, h.now());
    const sent = h.standIns.x.tweets().length;

    const retried = await h.api.request('POST', `/api/v1/posts/${res.body.data.id}/first-comment`);
    assert.equal(retried.status, 404, retried.text);
    assert.deepEqual(retried.body.error, { code: 'not_found', message: `Account ${account.id} is not active; reconnect it or switch it on to retry the first comment` });
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    assert.equal(h.standIns.x.tweets().length, sent);
    assert.equal((await row(res.body.data.id)).first_comment_status, 'failed');
  });

  it('deactivating an account cancels its scheduled posts with account_deactivated and returns their quota', async () => {
    await h.syncClock();
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'will be cancelled', schedule_at: inMinutes(90).toISOString() } });
    assert.equal(res.status, 201, res.text);
    const off = await h.api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(await h.settle(res.body.data.id), { outcome: 'gone' });
    const cancelled = await row(res.body.data.id);
    assert.deepEqual([cancelled.status, cancelled.error_message], ['deleted', 'account_deactivated']);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
  });

  it('a credential the platform refuses at publish time marks the connection lost and cancels the account\'s scheduled posts', async () => {
    await h.syncClock();
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await refusalsTakenAsReal(h.db, account);
    const before = await usageFor(h.db, h.api.userId, h.now());
    const due = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'refused credential', schedule_at: inMinutes(20).toISOString() } });
    const later = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'later one', schedule_at: inMinutes(300).toISOString() } });
    h.standIns.x.standIn.inject(
      { method: 'POST', path: '/2/tweets' },
      xAnswers.unauthorized,
      1,
    );
    assert.deepEqual(await h.settle(due.body.data.id), { outcome: 'cancelled' });
    for (const id of [due.body.data.id, later.body.data.id]) {
      const cancelled = await row(id);
      assert.deepEqual([cancelled.status, cancelled.error_message], ['deleted', 'connection_lost']);
    }
    const state = await h.db.selectFrom('accounts').select(['active', 'inactive_reason']).where('id', '=', account.id).executeTakeFirstOrThrow();
    assert.deepEqual(state, { active: false, inactive_reason: 'connection_lost' });
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
    assert.deepEqual(await h.settle(later.body.data.id), { outcome: 'gone' });
  });
});
