import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AccountRow } from '../../src/db/tables/accounts';
import { png } from '../media/fixtures';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/** A tiny origin serving fixed files, as a client's media host. */
async function startFileServer(files: Record<string, { type: string; body: Buffer }>) {
  const server = http.createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.body.length) }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('Posts with media: URLs, upload ids, entries with alt', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let x: AccountRow;
  let files: Awaited<ReturnType<typeof startFileServer>>;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    files = await startFileServer({
      '/cat.png': { type: 'image/png', body: png(40, 30) },
      '/notes.txt': { type: 'image/png', body: Buffer.from('this is not an image at all') },
    });
  });
  after(async () => {
    await files?.close();
    await h?.stop();
  });

  const mediaRows = () => h.db.selectFrom('media').select(['id', 'origin']).where('user_id', '=', h.api.userId).execute();

  it('media_urls: downloaded, checked, uploaded to the platform, and the downloaded copy removed after publishing', async () => {
    const url = `${files.origin}/cat.png`;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'a cat', media_urls: [url] } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.data.media_urls, [url]);
    const tweet = h.standIns.x.liveTweets().find((t) => t.text.startsWith('a cat '));
    assert.equal(tweet?.media_ids?.length, 1);
    // The answer comes once the platform answered; the cleanup is the workflow's last step.
    await h.settle(res.body.data.id);
    assert.deepEqual(await mediaRows(), []);
  });

  it('an unusable file is refused with 400 unsupported_media before anything is written', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: x.id, text: 'not a cat', media_urls: [`${files.origin}/notes.txt`], schedule_at: new Date(h.now().getTime() + 3_600_000).toISOString() },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'unsupported_media');
    assert.equal((await h.db.selectFrom('posts').select('id').where('text', '=', 'not a cat').execute()).length, 0);
    assert.deepEqual(await mediaRows(), []);
  });

  it('scheduled: the file is stored at creation and published from the store at the time', async () => {
    await h.syncClock();
    const url = `${files.origin}/cat.png`;
    const res = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: x.id, text: 'a scheduled cat', media: [{ url, alt: 'A grey cat' }], schedule_at: new Date(h.now().getTime() + 3_600_000).toISOString() },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual((await mediaRows()).map((r) => r.origin), ['url']);
    await h.settle(res.body.data.id);
    const tweet = h.standIns.x.liveTweets().find((t) => t.text.startsWith('a scheduled cat '));
    assert.equal(tweet?.media_ids?.length, 1);
    assert.equal(h.standIns.x.media(tweet!.media_ids![0]!)?.alt, 'A grey cat');
    assert.deepEqual(await mediaRows(), []);
  });

  it('media_ids from POST /api/v1/media publish and the upload is kept; another user\'s id is 404 media_not_found', async () => {
    const upload = await h.api.request('POST', '/api/v1/media', { body: { url: `${files.origin}/cat.png` } });
    assert.equal(upload.status, 201, upload.text);
    const id = upload.body.data.id;
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'uploaded cat', media_ids: [id] } });
    assert.equal(res.status, 201, res.text);
    assert.equal(h.standIns.x.liveTweets().find((t) => t.text.startsWith('uploaded cat '))?.media_ids?.length, 1);
    assert.deepEqual(await mediaRows(), [{ id, origin: 'upload' }]);

    const other = await h.api.newUser('agent');
    const theirs = await insertXAccount(h.db, other.userId, h.standIns.x);
    const foreign = await h.api.request('POST', '/api/v1/posts', { key: other.apiKey, body: { account_id: theirs.id, text: 'stolen cat', media_ids: [id] } });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'media_not_found');
  });

  it('two media spellings are 400 bad_request', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'x', media_urls: [`${files.origin}/cat.png`], media_ids: [x.id] } });
    assert.deepEqual(res.body, { error: { code: 'bad_request', message: 'use at most one of media, media_ids and media_urls; got media_ids and media_urls' } });
  });
});
