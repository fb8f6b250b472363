import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
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
});
