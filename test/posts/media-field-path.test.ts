import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AccountRow } from '../../src/db/tables/accounts';
import { gif, png } from '../media/fixtures';
import { insertXAccount } from './fixtures';
import { startPostsHarness, type PostsHarness } from './harness';

/**
 * A refused media URL names the request field that held it, as every other validation error does
 * (`media_urls[1]: Media URL ... answered HTTP 404`), for a post, a thread part and an edit alike.
 */
async function startFileServer(files: Record<string, { type: string; body: Buffer }>) {
  const server = http.createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.body.length) }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('A refused media URL names its field', function () {
  this.timeout(60_000);
  let h: PostsHarness;
  let x: AccountRow;
  let files: Awaited<ReturnType<typeof startFileServer>>;
  const inHours = (hours: number) => new Date(h.now().getTime() + hours * 3_600_000).toISOString();

  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    files = await startFileServer({
      '/cat.png': { type: 'image/png', body: png(40, 30) },
      '/dancing': { type: 'application/octet-stream', body: gif(20, 20) },
      '/notes.txt': { type: 'image/png', body: Buffer.from('this is not an image at all') },
    });
  });
  after(async () => {
    await files?.close();
    await h?.stop();
  });

  it('a post whose second URL answers 404 is 400 bad_request naming media_urls[1]', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'second missing', media_urls: [`${files.origin}/cat.png`, `${files.origin}/gone.png`] } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'bad_request');
    assert.equal(res.body.error.message, `media_urls[1]: Media URL ${files.origin}/gone.png answered HTTP 404`);
  });

  it('a post whose second `media` entry is undecodable is 400 unsupported_media naming media[1]', async () => {
    const res = await h.api.request('POST', '/api/v1/posts', {
      body: { account_id: x.id, text: 'second undecodable', media: [{ url: `${files.origin}/cat.png` }, { url: `${files.origin}/notes.txt` }], schedule_at: inHours(1) },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'unsupported_media');
    assert.match(res.body.error.message, /^media\[1\]: Media is undecodable: /);
  });

  const parts = (second: string) => [{ text: 'part one', media_urls: [`${files.origin}/cat.png`] }, { text: 'part two', media_urls: [`${files.origin}/cat.png`, `${files.origin}${second}`] }];

  it('a thread part whose second URL answers 404 names posts[1].media_urls[1]', async () => {
    const gone = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: parts('/gone.png'), schedule_at: inHours(2) } });
    assert.equal(gone.status, 400, gone.text);
    assert.equal(gone.body.error.code, 'bad_request');
    assert.equal(gone.body.error.message, `posts[1].media_urls[1]: Media URL ${files.origin}/gone.png answered HTTP 404`);
  });

  it('a thread part whose downloaded contents are refused names posts[1].media_urls, not a post\'s media_urls', async () => {
    // X takes a GIF only alone; no extension, so only the downloaded bytes tell it is one.
    const mixed = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: parts('/dancing'), schedule_at: inHours(2) } });
    assert.equal(mixed.status, 400, mixed.text);
    assert.equal(mixed.body.error.code, 'unsupported_media');
    assert.match(mixed.body.error.message, /posts\[1\]\.media_urls has 2 items including a GIF/);
  });

  it('an edit whose second new URL answers 404 names media_urls[1]; the post keeps its media', async () => {
    const created = await h.api.request('POST', '/api/v1/posts', { body: { account_id: x.id, text: 'to be edited', media_urls: [`${files.origin}/cat.png`], schedule_at: inHours(3) } });
    assert.equal(created.status, 201, created.text);
    const res = await h.api.request('PATCH', `/api/v1/posts/${created.body.data.id}`, { body: { media_urls: [`${files.origin}/cat.png`, `${files.origin}/gone.png`] } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'bad_request');
    assert.equal(res.body.error.message, `media_urls[1]: Media URL ${files.origin}/gone.png answered HTTP 404`);
    const after = await h.api.request('GET', `/api/v1/posts/${created.body.data.id}`);
    assert.deepEqual(after.body.data.media_urls, [`${files.origin}/cat.png`]);
  });
});
