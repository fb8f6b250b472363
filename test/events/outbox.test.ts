import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { markConnectionLost } from '../../src/accounts/lifecycle';
import type { AccountRow } from '../../src/db/tables/accounts';
import type { EventRow } from '../../src/db/tables/events';
import { recordPublished } from '../../src/posts/attempt-outcomes';
import { failThread } from '../../src/threads/repository';
import { insertMastodonAccount, insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

const refusal = { kind: 'reply' as const, response: { status: 422, headers: { 'content-type': 'application/json' }, json: { error: 'Validation failed: Text is spam' } } };

describe('Events outbox: written with the change it reports, once, naming the causing request', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;
  let m: AccountRow;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    m = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
  });
  after(async () => h?.stop());
  afterEach(() => {
    h.standIns.x.standIn.clearFaults();
    h.standIns.mastodon.standIn.clearFaults();
  });

  const eventsAbout = async (resourceId: string): Promise<EventRow[]> =>
    h.db
      .selectFrom('events')
      .selectAll()
      .where('user_id', '=', h.api.userId)
      .where((eb) => eb.or([sql<boolean>`${eb.ref('data')}->>'id' = ${resourceId}`, sql<boolean>`${eb.ref('data')}->>'thread_id' = ${resourceId}`]))
      .orderBy('id')
      .execute();
  const typesOf = (events: EventRow[]) => events.map((e) => e.type);
  const inMinutes = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000).toISOString();

  it('an immediate publish: one post.published whose data is the post as GET shows it, naming the request and its key', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'evented' }, headers: { 'Idempotency-Key': 'evt-key-1', 'X-Request-Id': 'req-evented-1' } });
    assert.equal(res.status, 201, res.text);
    const events = await eventsAbout(res.body.data.id);
    assert.deepEqual(typesOf(events), ['post.published']);
    const shown = await h.api.request('GET', `/api/v1/posts/${res.body.data.id}`);
    assert.deepEqual(events[0].data, shown.body.data);
    assert.deepEqual(events[0].request, { id: 'req-evented-1', idempotency_key: 'evt-key-1' });
    assert.match(events[0].id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);

    await recordPublished(h.db, res.body.data.id, { platformPostId: 'again', url: null, publishedAt: Date.now() });
    const replay = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'evented' }, headers: { 'Idempotency-Key': 'evt-key-1' } });
    assert.equal(replay.headers.get('idempotent-replay'), 'true');
    assert.deepEqual(typesOf(await eventsAbout(res.body.data.id)), ['post.published'], 'a repeated write or a replayed request emits nothing more');
  });

  it('an immediate fan-out (its posts recorded published together): one post.published for each post, naming the request', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_ids: [x.id, m.id], text: 'evented fan-out' }, headers: { 'X-Request-Id': 'req-fan-1' } });
    assert.equal(res.status, 201, res.text);
    const posts = await h.db.selectFrom('posts').select(['id', 'status']).where('user_id', '=', h.api.userId).where('text', '=', 'evented fan-out').execute();
    assert.equal(posts.length, 2);
    for (const post of posts) {
      assert.equal(post.status, 'published');
      const events = await eventsAbout(post.id);
      assert.deepEqual(typesOf(events), ['post.published']);
      assert.equal((events[0].data as { status: string }).status, 'published');
      assert.equal(events[0].request?.id, 'req-fan-1');
    }
  });

  it('post.failed once for a refused immediate post', async () => {
    h.standIns.mastodon.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, refusal, 1);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'refused for events' } });
    const failed = await h.db.selectFrom('posts').select(['id', 'status']).where('user_id', '=', h.api.userId).where('text', '=', 'refused for events').execute();
    assert.equal(failed.length, 1, res.text);
    const events = await eventsAbout(failed[0].id);
    assert.deepEqual(typesOf(events), ['post.failed']);
    assert.equal((events[0].data as { status: string }).status, 'failed');
    assert.equal(events[0].request?.id, res.headers.get('x-request-id'));
  });

  it('a scheduled post the user deletes: post.deleted once (null request only for the service own work)', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'scheduled then deleted', schedule_at: inMinutes(90) } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(await eventsAbout(res.body.data.id), [], 'scheduling reports nothing');
    const del = await h.api.request('DELETE', `/api/v1/posts/${res.body.data.id}`, { headers: { 'X-Request-Id': 'req-delete-1' } });
    assert.ok(del.status < 300, del.text);
    await h.api.request('DELETE', `/api/v1/posts/${res.body.data.id}`);
    const events = await eventsAbout(res.body.data.id);
    assert.deepEqual(typesOf(events), ['post.deleted']);
    assert.deepEqual(events[0].request, { id: 'req-delete-1', idempotency_key: null });
  });

  it('a scheduled publish is the service own work: its post.published names no request', async () => {
    await h.syncClock();
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'scheduled and evented', schedule_at: inMinutes(30) }, headers: { 'Idempotency-Key': 'evt-key-2' } });
    assert.equal(res.status, 201, res.text);
    await h.settle(res.body.data.id);
    const events = await eventsAbout(res.body.data.id);
    assert.deepEqual(typesOf(events), ['post.published']);
    assert.equal(events[0].request, null);
  });

  it('a change whose event cannot be written rolls back whole, and a rolled-back change emits nothing', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: m.id, text: 'delete rolls back', schedule_at: inMinutes(120) } });
    const postId: string = res.body.data.id;
    await sql`create function test_refuse_event() returns trigger language plpgsql as $$
      begin raise exception 'refused for the test'; end $$`.execute(h.db);
    await sql.raw(`create trigger test_refuse_event after insert on events for each row when (new.data->>'id' = '${postId}') execute function test_refuse_event()`).execute(h.db);
    try {
      const del = await h.api.request('DELETE', `/api/v1/posts/${postId}`);
      assert.equal(del.status, 500, del.text);
    } finally {
      await sql`drop trigger test_refuse_event on events`.execute(h.db);
      await sql`drop function test_refuse_event()`.execute(h.db);
    }
    const row = await h.db.selectFrom('posts').select('status').where('id', '=', postId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'scheduled', 'the cancellation rolled back with its event');
    assert.deepEqual(await eventsAbout(postId), []);

    const again = await h.api.request('DELETE', `/api/v1/posts/${postId}`);
    assert.ok(again.status < 300, again.text);
    assert.deepEqual(typesOf(await eventsAbout(postId)), ['post.deleted']);
  });

  it('deactivating an account: post.cancelled for each of its scheduled posts, once', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'to be cancelled', schedule_at: inMinutes(180) } });
    assert.equal(res.status, 201, res.text);
    assert.equal((await h.api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } })).status, 200);
    await h.api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } });
    const events = await eventsAbout(res.body.data.id);
    assert.deepEqual(typesOf(events), ['post.cancelled']);
    assert.equal((events[0].data as { error_message: string }).error_message, 'account_deactivated');
  });

  it('first_comment.posted and first_comment.failed, once each, beside the post event', async () => {
    const posted = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'events with a comment', first_comment: 'events comment' } });
    assert.equal(posted.status, 201, posted.text);
    assert.deepEqual(typesOf(await eventsAbout(posted.body.data.id)).sort(), ['first_comment.posted', 'post.published']);

    await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'events duplicate words' } });
    const failing = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'events comment fails', first_comment: 'events duplicate words' } });
    assert.equal(failing.body.data.first_comment.status, 'failed', failing.text);
    const events = await eventsAbout(failing.body.data.id);
    assert.deepEqual(typesOf(events).sort(), ['first_comment.failed', 'post.published']);
    assert.equal((events.find((e) => e.type === 'first_comment.failed')!.data as { first_comment: { status: string } }).first_comment.status, 'failed');
  });

  it('thread.published with the parts in order, and thread.failed with thread_rollback for a discarded thread', async () => {
    const ok = await h.api.request('POST', '/api/v1/threads', { body: { account_id: m.id, posts: [{ text: 'evt thread one' }, { text: 'evt thread two' }] } });
    assert.equal(ok.status, 201, ok.text);
    const threadId: string = ok.body.data.thread_id;
    const published = await eventsAbout(threadId);
    assert.deepEqual(typesOf(published), ['thread.published']);
    const data = published[0].data as { posts: Array<{ text: string; status: string }> };
    assert.deepEqual(data.posts.map((p) => [p.text, p.status]), [['evt thread one', 'published'], ['evt thread two', 'published']]);
    await failThread(h.db, threadId, 'not publishing any more');
    assert.deepEqual(typesOf(await eventsAbout(threadId)), ['thread.published'], 'a write whose expected status is gone emits nothing');

    h.standIns.mastodon.standIn.inject({ method: 'POST', path: '/api/v1/statuses' }, refusal, 1);
    const refused = await h.api.request('POST', '/api/v1/threads', { body: { account_id: m.id, posts: [{ text: 'evt refused one' }, { text: 'evt refused two' }] } });
    assert.equal(refused.status, 502, refused.text);
    const failedEvents = await h.db.selectFrom('events').selectAll().where('user_id', '=', h.api.userId).where('type', '=', 'thread.failed').execute();
    const mine = failedEvents.filter((e) => (e.data as { posts: Array<{ text: string }> }).posts.some((p) => p.text === 'evt refused one'));
    assert.equal(mine.length, 1);
    const failed = mine[0].data as { posts: Array<{ status: string; error_message: string }>; thread_rollback: unknown };
    assert.deepEqual(failed.posts.map((p) => p.status), ['failed', 'failed']);
    assert.equal(failed.posts[0].error_message, refused.body.error.message);
    assert.deepEqual(failed.thread_rollback, refused.body.error.thread_rollback);
    assert.equal(mine[0].request?.id, refused.headers.get('x-request-id'));
  });

  it('account.connection_lost once, with the account as the API shows it and no request', async () => {
    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    assert.equal(await markConnectionLost(h.db, account.id), true);
    assert.equal(await markConnectionLost(h.db, account.id), false);
    const events = await eventsAbout(account.id);
    assert.deepEqual(typesOf(events), ['account.connection_lost']);
    assert.equal((events[0].data as { inactive_reason: string }).inactive_reason, 'connection_lost');
    assert.equal(events[0].request, null);
  });

  it('account.connection_lost inside a caller transaction (a refused credential renewal holds the row lock) commits and rolls back with it', async () => {
    const rolledBack = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    await assert.rejects(
      h.db.transaction().execute(async (trx) => {
        assert.equal(await markConnectionLost(trx, rolledBack.id), true);
        throw new Error('the renewal failed after marking');
      }),
      /the renewal failed after marking/,
    );
    assert.deepEqual(typesOf(await eventsAbout(rolledBack.id)), []);

    const committed = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    await h.db.transaction().execute(async (trx) => {
      await trx.selectFrom('accounts').select('id').where('id', '=', committed.id).forUpdate().execute();
      assert.equal(await markConnectionLost(trx, committed.id), true);
    });
    assert.deepEqual(typesOf(await eventsAbout(committed.id)), ['account.connection_lost']);
  });
});
