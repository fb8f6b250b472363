import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { madeSettleMs, madeSettlePollMs, untilMadeSettled } from '../../src/posts/made-settled';
import { usageFor } from '../../src/quota/quota';
import { jpeg } from '../media/fixtures';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * An idempotent create commits its rows, then stores its answer in a later write. A process that dies between the
 * two leaves the key claimed without an answer; once the claim's lease ends, the retry with the same key takes it
 * over. It used to run the create again (a second post, thread or fan-out); it now answers from the rows the first
 * made (`idempotency_keys.made`, written in the create's own statement), as a replay.
 *
 * The death is simulated in the database after a create that went through: its key is put back as the dead process
 * left it (claimed, no answer, the lease ended), the rows and what it made as they were committed.
 */
describe('Idempotency-Key: a create whose process died before its answer was stored', function () {
  this.timeout(90_000);
  let h: PostsHarness;
  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());

  const dieBeforeStoring = (key: string) =>
    h.db
      .updateTable('idempotency_keys')
      .set({ state: 'in_progress', locked_until: new Date(Date.now() - 1_000), response_status: null, response_body: null, response_headers: null })
      .where('key', '=', key)
      .execute();
  const rowsWithText = async (text: string) => (await h.db.selectFrom('posts').select('id').where('text', '=', text).execute()).length;
  const tweetsWithText = (text: string) => h.standIns.x.tweets().filter((t) => t.text === text).length;

  it('a post published: the retry answers the first answer (201, replayed), and nothing is published again', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const key = `crash-post-${x.id}`;
    const send = () => h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'once, crash or not' }, headers: { 'Idempotency-Key': key } });
    const first = await send();
    assert.deepEqual([first.status, first.body.data.status], [201, 'published'], first.text);
    await dieBeforeStoring(key);

    const retry = await send();
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay')], [201, 'true'], retry.text);
    assert.deepEqual(retry.body, first.body);
    assert.equal(await rowsWithText('once, crash or not'), 1);
    assert.equal(tweetsWithText('once, crash or not'), 1);
    // The answer is stored now: the next retry is a plain replay.
    const replay = await send();
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replay'), replay.text], [201, 'true', retry.text]);
  });

  it('a fan-out published: the retry answers the same results and group, nothing again', async () => {
    const a = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const b = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const key = `crash-fan-${a.id}`;
    const send = () => h.api.request('POST', '/api/v1/posts', { body: { account_ids: [a.id, b.id], text: 'fan-out, crash or not' }, headers: { 'Idempotency-Key': key } });
    const first = await send();
    assert.equal(first.status, 201, first.text);
    await dieBeforeStoring(key);

    const retry = await send();
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay')], [201, 'true'], retry.text);
    assert.deepEqual(retry.body, first.body);
    assert.equal(await rowsWithText('fan-out, crash or not'), 2);
    assert.equal(tweetsWithText('fan-out, crash or not'), 2);
  });

  it('a scheduled post: the retry answers the same post, no second one scheduled or charged', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const key = `crash-scheduled-${x.id}`;
    const at = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 5 * 3_600_000).toISOString();
    const send = () => h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'later, crash or not', schedule_at: at }, headers: { 'Idempotency-Key': key } });
    const first = await send();
    assert.deepEqual([first.status, first.body.data.status], [201, 'scheduled'], first.text);
    await dieBeforeStoring(key);

    const retry = await send();
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay'), retry.body], [201, 'true', first.body], retry.text);
    assert.equal(await rowsWithText('later, crash or not'), 1);
  });

  it('a thread published: the retry answers the same thread, no part sent again', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const key = `crash-thread-${x.id}`;
    const parts = ['thread one, crash or not', 'thread two, crash or not'];
    const send = () => h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: parts.map((text) => ({ text })) }, headers: { 'Idempotency-Key': key } });
    const first = await send();
    assert.equal(first.status, 201, first.text);
    assert.deepEqual(first.body.data.posts.map((p: { status: string }) => p.status), ['published', 'published']);
    await dieBeforeStoring(key);

    const retry = await send();
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay')], [201, 'true'], retry.text);
    assert.deepEqual(retry.body, first.body);
    for (const text of parts) {
      assert.equal(await rowsWithText(text), 1, text);
      assert.equal(tweetsWithText(text), 1, text);
    }
  });

  it('a draft thread: the retry answers the same drafts', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const key = `crash-draft-${x.id}`;
    const send = () =>
      h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, draft: true, posts: [{ text: 'draft one, crash or not' }, { text: 'draft two, crash or not' }] }, headers: { 'Idempotency-Key': key } });
    const first = await send();
    assert.equal(first.status, 201, first.text);
    await dieBeforeStoring(key);

    const retry = await send();
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay'), retry.body], [201, 'true', first.body], retry.text);
    assert.equal(await rowsWithText('draft one, crash or not'), 1);
  });

  it('a request that stalled past its lease before its create writes nothing once an identical one took the key over (409)', async () => {
    // The stalled request waits on its media: the first download of the image is held until let go, later ones answer.
    const image = jpeg(1080, 1080);
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let downloads = 0;
    const server = http.createServer((_req, res) => {
      downloads += 1;
      const answer = () => res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(image.length) }).end(image);
      if (downloads === 1) void held.then(answer);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
      const key = `stalled-${x.id}`;
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/held.jpg`;
      const send = () => h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'stalled, then taken over', media_urls: [url] }, headers: { 'Idempotency-Key': key } });
      const stalled = send();
      while (downloads < 1) await sleep(20);
      // Its lease ends (as if its process froze): an identical request takes the key over and creates the post.
      await h.db.updateTable('idempotency_keys').set({ locked_until: new Date(Date.now() - 1_000) }).where('key', '=', key).execute();
      const takeover = await send();
      assert.deepEqual([takeover.status, takeover.headers.get('idempotent-replay')], [201, null], takeover.text);
      letGo();
      const late = await stalled;
      assert.deepEqual([late.status, late.body.error?.code], [409, 'idempotency_in_progress'], late.text);
      assert.equal(await rowsWithText('stalled, then taken over'), 1);
      assert.equal(h.standIns.x.tweets().filter((t) => t.text.startsWith('stalled, then taken over')).length, 1);
      const replay = await send();
      assert.deepEqual([replay.status, replay.headers.get('idempotent-replay'), replay.text], [201, 'true', takeover.text]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  /** A published post of `x` whose first comment X refused as a duplicate, the duplicated post since deleted: retryable. */
  async function postWithFailedComment(x: { id: string }, words: string): Promise<string> {
    const duplicated = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: words } });
    const post = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: `under ${words}`, first_comment: words } });
    assert.equal(post.body.data?.first_comment?.status, 'failed', post.text);
    await h.api.request('DELETE', `/api/v1/posts/${duplicated.body.data.id}`);
    return post.body.data.id;
  }
  const liveWithText = (text: string) => h.standIns.x.liveTweets().filter((t) => t.text === text).length;

  it('a first-comment retry that posted: the retry answers the first 200 (replayed), nothing sent or charged again', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const words = `first comment, crash or not ${x.id}`;
    const id = await postWithFailedComment(x, words);
    const key = `crash-first-comment-${x.id}`;
    const send = () => h.api.request('POST', `/api/v1/posts/${id}/first-comment`, { headers: { 'Idempotency-Key': key } });
    const first = await send();
    assert.deepEqual([first.status, first.body.data?.first_comment?.status], [200, 'posted'], first.text);
    const used = await usageFor(h.db, h.api.userId, h.now());
    await dieBeforeStoring(key);

    const retry = await send();
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay')], [200, 'true'], retry.text);
    assert.deepEqual(retry.body, first.body);
    assert.equal(liveWithText(words), 1, 'the comment sent once');
    assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), used, 'charged once');
    const replay = await send();
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replay'), replay.text], [200, 'true', retry.text]);
  });

  it('a first-comment retry whose call is still out (its process froze past the lease): the takeover waits for it and answers the first 200, not 409', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const words = `first comment, frozen mid-call ${x.id}`;
    const id = await postWithFailedComment(x, words);
    const key = `crash-first-comment-frozen-${x.id}`;
    const send = () => h.api.request('POST', `/api/v1/posts/${id}/first-comment`, { headers: { 'Idempotency-Key': key } });
    const first = await send();
    assert.equal(first.status, 200, first.text);
    await dieBeforeStoring(key);
    // The comment as it stood while the first request's call was out: `pending`, its call begun a moment ago.
    const posted = await h.db.selectFrom('posts').select(['first_comment_status', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
    await h.db.updateTable('posts').set({ first_comment_status: 'pending', first_comment_attempt_started_at: sql<Date>`now()` }).where('id', '=', id).execute();
    const answered = sleep(1_000).then(() =>
      h.db.updateTable('posts').set({ ...posted, first_comment_attempt_started_at: null }).where('id', '=', id).execute(),
    );

    const retry = await send();
    await answered;
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay')], [200, 'true'], retry.text);
    assert.deepEqual(retry.body, first.body);
    assert.equal(liveWithText(words), 1, 'the comment sent once');
  });

  it('a first-comment retry whose process died mid-call: once abandoned, the takeover answers it unconfirmed (502) instead of waiting on it, nothing sent again', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const words = `first comment, died mid-call ${x.id}`;
    const id = await postWithFailedComment(x, words);
    const key = `crash-first-comment-call-${x.id}`;
    const send = () => h.api.request('POST', `/api/v1/posts/${id}/first-comment`, { headers: { 'Idempotency-Key': key } });
    assert.equal((await send()).status, 200);
    await dieBeforeStoring(key);
    // The comment as a process leaves it that died after its call began, long enough ago that nobody will finish it.
    await h.db
      .updateTable('posts')
      .set({ first_comment_status: 'pending', first_comment_attempt_started_at: sql<Date>`now() - interval '16 minutes'` })
      .where('id', '=', id)
      .execute();

    const retry = await send();
    const unconfirmed = 'X did not confirm whether the first comment was published; check the account before sending it again.';
    assert.deepEqual([retry.status, retry.body.error], [502, { code: 'first_comment_failed', message: unconfirmed }], retry.text);
    const row = await h.db.selectFrom('posts').select(['first_comment_status', 'first_comment_error']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { first_comment_status: 'failed', first_comment_error: unconfirmed });
    assert.equal(liveWithText(words), 1, 'not sent again unasked');
  });

  it('a takeover waits for its rows up to 60 s, reading them every 500 ms, then answers 409 idempotency_in_progress; rows settling meanwhile end the wait', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const at = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 7 * 3_600_000).toISOString();
    const created = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'never settles', schedule_at: at } });
    const id: string = created.body.data.id;
    // Its workflow is left alone: the row says `publishing`, as a takeover finds an immediate post still going out.
    await h.db.updateTable('posts').set({ status: 'publishing' }).where('id', '=', id).execute();
    let now = 0;
    const slept: number[] = [];
    const clock = {
      now: () => now,
      sleep: async (ms: number) => {
        slept.push(ms);
        now += ms;
      },
    };
    await assert.rejects(untilMadeSettled(h, [id], clock), (err: Error & { code?: string; status?: number }) => err.code === 'idempotency_in_progress' && err.status === 409);
    assert.deepEqual([madeSettleMs, madeSettlePollMs], [60_000, 500]);
    assert.equal(now, madeSettleMs, 'gave up at 60 s, not before');
    assert.ok(slept.length === madeSettleMs / madeSettlePollMs && slept.every((ms) => ms === madeSettlePollMs), String(slept));

    now = 0;
    const settling = {
      now: () => now,
      sleep: async (ms: number) => {
        now += ms;
        if (now === 30_000) await h.db.updateTable('posts').set({ status: 'published' }).where('id', '=', id).execute();
      },
    };
    await untilMadeSettled(h, [id], settling);
    assert.equal(now, 30_000, 'answered at the read after the rows settled');
  });
});
