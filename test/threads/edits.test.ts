import assert from 'node:assert/strict';
import type { AccountRow } from '../../src/db/tables/accounts';
import { usageFor } from '../../src/quota/quota';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/** Thread-wide edits through the posts routes: rescheduling moves every part, a draft thread is promoted whole. */
describe('Threads: rescheduling and promotion as one unit', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;

  before(async function () {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
  });
  after(async () => h?.stop());

  const inMinutes = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000);
  const rows = (threadId: string) => h.db.selectFrom('posts').selectAll().where('thread_id', '=', threadId).orderBy('thread_order').execute();
  const settle = async (threadId: string) => {
    const result = await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result();
    await h.syncClock();
    return result;
  };

  it('rescheduling one part moves the whole thread (rescheduled_post_ids); text applies only to that part; it publishes at the new time', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'move one' }, { text: 'move two' }, { text: 'move three' }], schedule_at: inMinutes(60).toISOString() },
    });
    const { thread_id, posts } = res.body.data;
    const ids: string[] = posts.map((p: any) => p.id);
    const to = inMinutes(120);
    const patched = await h.api.request('PATCH', `/api/v1/posts/${ids[2]}`, { body: { schedule_at: to.toISOString(), text: 'move three, edited' } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.data.rescheduled_post_ids, [...ids].sort());
    assert.equal(patched.body.data.text, 'move three, edited');
    const stored = await rows(thread_id);
    assert.deepEqual(stored.map((r) => [r.text, r.scheduled_at!.toISOString(), r.status]), [
      ['move one', to.toISOString(), 'scheduled'],
      ['move two', to.toISOString(), 'scheduled'],
      ['move three, edited', to.toISOString(), 'scheduled'],
    ]);
    await h.env.sleep('61 minutes');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'move one').length, 0, 'not at the old time');
    assert.deepEqual(await settle(thread_id), { outcome: 'published', firstComment: null });
    assert.ok(h.now().getTime() >= to.getTime());
    assert.deepEqual((await rows(thread_id)).map((r) => r.status), ['published', 'published', 'published']);
  });

  it('promoting any part of a draft thread with publish: true publishes all of it; new parts carry promoted_from_draft_id; quota spent', async () => {
    const draft = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'promo one' }, { text: 'promo two' }], first_comment: 'promo comment', draft: true } });
    const draftIds: string[] = draft.body.data.posts.map((p: any) => p.id);
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('PATCH', `/api/v1/posts/${draftIds[1]}`, { body: { publish: true } });
    assert.equal(res.status, 200, res.text);
    const data = res.body.data;
    assert.deepEqual(data.promoted_from_draft_ids, draftIds);
    assert.equal(data.promoted_from_draft_id, draftIds[1]);
    assert.equal(data.status, 'published');
    assert.equal(data.text, 'promo two');
    assert.equal(data.first_comment.status, 'posted');
    const parts = await rows(data.thread_id);
    assert.deepEqual(parts.map((r) => [r.text, r.status, r.promoted_from_draft_id]), [
      ['promo one', 'published', draftIds[0]],
      ['promo two', 'published', draftIds[1]],
    ]);
    const [one, two] = ['promo one', 'promo two'].map((t) => h.standIns.x.liveTweets().find((tw) => tw.text === t)!);
    assert.deepEqual(two!.referenced_tweets, [{ type: 'replied_to', id: one!.id }]);
    assert.equal((await usageFor(h.db, h.api.userId, h.now())).posts, before.posts + 3, 'two parts and the first comment');
    const again = await h.api.request('PATCH', `/api/v1/posts/${draftIds[0]}`, { body: { publish: true } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'post_not_editable');
  });

  it('promoting with schedule_at queues the whole thread at that time (rescheduled_post_ids lists the new parts)', async () => {
    await h.syncClock();
    const draft = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'later promo one' }, { text: 'later promo two' }], draft: true } });
    const draftIds: string[] = draft.body.data.posts.map((p: any) => p.id);
    const at = inMinutes(300);
    const res = await h.api.request('PATCH', `/api/v1/posts/${draftIds[0]}`, { body: { schedule_at: at.toISOString() } });
    assert.equal(res.status, 200, res.text);
    const parts = await rows(res.body.data.thread_id);
    assert.deepEqual(res.body.data.rescheduled_post_ids, parts.map((p) => p.id));
    assert.deepEqual(parts.map((p) => [p.status, p.scheduled_at!.toISOString()]), [['scheduled', at.toISOString()], ['scheduled', at.toISOString()]]);
  });

  it('a one-part draft thread cannot be promoted: 400 with the two-part rule, the draft unchanged, nothing charged', async () => {
    const draft = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'lonely' }], draft: true } });
    const id = draft.body.data.posts[0].id;
    const before = await usageFor(h.db, h.api.userId, h.now());
    const res = await h.api.request('PATCH', `/api/v1/posts/${id}`, { body: { publish: true } });
    assert.deepEqual(res.body, { error: { code: 'bad_request', message: 'A thread needs at least two parts; got 1' } });
    assert.equal(res.status, 400);
    const row = await h.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.promoted_to_id], ['draft', null]);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
  });

  it('a first comment sent on any part of a scheduled thread applies to the thread: it lives on the last part and is published under it', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'fc one' }, { text: 'fc two' }], schedule_at: inMinutes(400).toISOString() },
    });
    const { thread_id, posts } = res.body.data;
    const patched = await h.api.request('PATCH', `/api/v1/posts/${posts[0].id}`, { body: { first_comment: 'fc comment', text: 'fc one, edited' } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual([patched.body.data.text, patched.body.data.first_comment], ['fc one, edited', null]);
    const stored = await rows(thread_id);
    assert.deepEqual(stored.map((r) => [r.text, r.first_comment_text, r.first_comment_status]), [
      ['fc one, edited', null, null],
      ['fc two', 'fc comment', 'pending'],
    ]);
    await h.env.sleep('400 minutes');
    assert.deepEqual(await settle(thread_id), { outcome: 'published', firstComment: 'posted' });
    const two = h.standIns.x.liveTweets().find((t) => t.text === 'fc two')!;
    assert.deepEqual(h.standIns.x.liveTweets().find((t) => t.text === 'fc comment')!.referenced_tweets, [{ type: 'replied_to', id: two.id }]);
  });

  const reservations = () =>
    h.db
      .selectFrom('quota_reservations')
      .select(['post_id', 'kind', 'state', 'overage'])
      .where('user_id', '=', h.api.userId)
      .orderBy('post_id')
      .orderBy('kind')
      .orderBy('state')
      .execute();

  it('a first comment sent on another part with a refused change changes nothing: 400, the last part and the quota as before', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'whole one' }, { text: 'whole two' }], first_comment: 'whole comment', schedule_at: inMinutes(500).toISOString() },
    });
    const { thread_id, posts } = res.body.data;
    const [storedBefore, reservedBefore, usageBefore] = [await rows(thread_id), await reservations(), await usageFor(h.db, h.api.userId, h.now())];
    const patched = await h.api.request('PATCH', `/api/v1/posts/${posts[0].id}`, { body: { first_comment: 'whole comment, edited', text: 'x'.repeat(281) } });
    assert.equal(patched.status, 400, patched.text);
    assert.equal(patched.body.error.code, 'bad_request');
    assert.deepEqual(await rows(thread_id), storedBefore);
    assert.deepEqual(await reservations(), reservedBefore);
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), usageBefore);
  });

  it('a first comment sent on another part with a valid change applies both, the first comment reserved once on the last part', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'both one' }, { text: 'both two' }], first_comment: 'both comment', schedule_at: inMinutes(600).toISOString() },
    });
    const { thread_id, posts } = res.body.data;
    const usageBefore = await usageFor(h.db, h.api.userId, h.now());
    const patched = await h.api.request('PATCH', `/api/v1/posts/${posts[0].id}`, { body: { first_comment: 'both comment, edited', text: 'both one, edited' } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual([patched.body.data.id, patched.body.data.text, patched.body.data.first_comment, patched.body.data.warnings], [posts[0].id, 'both one, edited', null, undefined]);
    assert.deepEqual((await rows(thread_id)).map((r) => [r.text, r.first_comment_text, r.first_comment_status]), [
      ['both one, edited', null, null],
      ['both two', 'both comment, edited', 'pending'],
    ]);
    const held = (await reservations()).filter((r) => r.post_id === posts[1].id && r.kind === 'first_comment' && r.state === 'reserved');
    assert.equal(held.length, 1);
    assert.equal((await usageFor(h.db, h.api.userId, h.now())).posts, usageBefore.posts);
  });

  it('a first comment with a timezone and nothing else, sent on another part, is answered as on the last part', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/threads', {
      body: { account_id: x.id, posts: [{ text: 'zone one' }, { text: 'zone two' }], schedule_at: inMinutes(700).toISOString() },
    });
    const { thread_id, posts } = res.body.data;
    const body = { first_comment: 'zone comment', timezone: 'Europe/Berlin' };
    const onLast = await h.api.request('PATCH', `/api/v1/posts/${posts[1].id}`, { body });
    assert.equal(onLast.status, 200, onLast.text);
    const onFirst = await h.api.request('PATCH', `/api/v1/posts/${posts[0].id}`, { body: { ...body, first_comment: 'zone comment, again' } });
    assert.equal(onFirst.status, 200, onFirst.text);
    assert.deepEqual((await rows(thread_id)).map((r) => r.first_comment_text), [null, 'zone comment, again']);
    const badZone = await h.api.request('PATCH', `/api/v1/posts/${posts[0].id}`, { body: { first_comment: 'zone comment', timezone: 'Mars/Olympus' } });
    const badOnLast = await h.api.request('PATCH', `/api/v1/posts/${posts[1].id}`, { body: { first_comment: 'zone comment', timezone: 'Mars/Olympus' } });
    assert.deepEqual([badZone.status, badZone.body], [400, badOnLast.body], 'the timezone is still checked, as on the last part');
  });

  it('a draft thread given only a first comment on another part answers that part with warnings, the first comment stored on the last part', async () => {
    const draft = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'warn one' }, { text: 'warn two' }], draft: true } });
    const { thread_id, posts } = draft.body.data;
    const patched = await h.api.request('PATCH', `/api/v1/posts/${posts[0].id}`, { body: { first_comment: 'more at https://e.com' } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual([patched.body.data.id, patched.body.data.status, patched.body.data.first_comment], [posts[0].id, 'draft', null]);
    assert.deepEqual(
      patched.body.data.warnings.map((w: any) => [w.account_id, w.code]),
      [[x.id, 'x_link_post_billed']],
      'the link of the first comment, as a PATCH of the last part warns',
    );
    assert.deepEqual((await rows(thread_id)).map((r) => r.first_comment_text), [null, 'more at https://e.com']);
  });
});
