import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { sql } from 'kysely';
import { errorMiddleware } from '../../api/middleware/errors';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import type { PlanName } from '../../src/plans';
import { ingestMediaUrl } from '../../src/media/ingest';
import { toMediaItems } from '../../src/media/media-items';
import { createPublicMediaRouter } from '../../src/media/public-route';
import { createMediaUrlSigner, deriveMediaUrlKey, type MediaUrlSigner } from '../../src/media/public-url';
import { createMediaRouter } from '../../src/media/routes';
import { requireDecodable } from '../../src/media/sniff';
import { createMediaStore, type MediaStore } from '../../src/media/store';
import { privatelyResolvedHostname } from '../helpers/private-hostname';
import { rejectsWith } from './assert-error';
import { gif, jpeg, movie, png } from './fixtures';
import { insertUser, mediaTestDatabase } from './media-db';

type UploadBody = { data: { id: string; created_at: string } };

/** Stands in for the API's authentication: the user and plan the request names. */
function callerOf(req: express.Request): { userId: string; plan: PlanName } {
  return { userId: String(req.headers['x-user']), plan: (req.headers['x-plan'] as PlanName | undefined) ?? 'free' };
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

describe('media routes', function () {
  this.timeout(60_000);
  let database: Awaited<ReturnType<typeof mediaTestDatabase>>;
  let store: MediaStore;
  let signer: MediaUrlSigner;
  let client: HttpClient;
  let guarded: HttpClient;
  let api: http.Server;
  let apiUrl: string;
  let origin: http.Server;
  let originUrl: string;
  let userId: string;
  const clip = movie({ width: 640, height: 360, duration: 4_500 });

  before(async () => {
    database = await mediaTestDatabase();
    store = createMediaStore(database.media, { chunkBytes: 100 });
    client = createHttpClient({ allowInsecure: true });
    guarded = createHttpClient({ allowInsecure: false });
    userId = await insertUser(database.db);

    origin = http.createServer((req, res) => {
      if (req.url === '/clip') return res.writeHead(200).end(clip);
      if (req.url === '/page') return res.writeHead(200, { 'content-type': 'image/jpeg' }).end('<html></html>');
      if (req.url === '/huge') return res.writeHead(200).end(Buffer.alloc(60_000));
      res.writeHead(404).end();
    });
    originUrl = await listen(origin);

    const app = express();
    api = http.createServer(app);
    apiUrl = await listen(api);
    signer = createMediaUrlSigner({ publicBaseUrl: `${apiUrl}/`, key: deriveMediaUrlKey(randomBytes(32)) });
    app.use(createPublicMediaRouter({ store, signer }));
    // Stands in for the API's authentication: the lead mounts the router behind the real one.
    app.use(
      '/api/v1/media',
      createMediaRouter({ store, http: client, allowInsecureUrls: true, callerOf, maxBytes: 50_000, downloadTimeoutMs: 5_000 }),
    );
    // As in production: https on public addresses only.
    app.use('/api/v1/guarded-media', createMediaRouter({ store, http: guarded, allowInsecureUrls: false, callerOf }));
    app.use(
      '/api/v1/slow-media',
      createMediaRouter({ store, http: client, allowInsecureUrls: true, callerOf, uploadTimeoutMs: 500 }),
    );
    app.use(errorMiddleware);
  });

  after(async () => {
    await client.close();
    await guarded.close();
    for (const server of [api, origin]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const mediaCount = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from media where user_id = ${userId}`.execute(database.db)).rows[0].n;

  const upload = (bytes: Buffer, options: { field?: string; filename?: string; type?: string } = {}) => {
    const form = new FormData();
    form.append(options.field ?? 'file', new Blob([bytes], { type: options.type ?? 'application/octet-stream' }), options.filename ?? 'upload.bin');
    return fetch(`${apiUrl}/api/v1/media`, { method: 'POST', body: form, headers: { 'x-user': userId } });
  };
  const uploadUrl = (body: unknown) =>
    fetch(`${apiUrl}/api/v1/media`, { method: 'POST', body: JSON.stringify(body), headers: { 'x-user': userId, 'content-type': 'application/json' } });

  describe('POST /api/v1/media', () => {
    it('stores a multipart file: type and size from the bytes, not the name or declared type', async () => {
      const bytes = gif(12, 9);
      const res = await upload(bytes, { filename: 'photo.jpg', type: 'image/jpeg' });
      const body = (await res.json()) as UploadBody;
      assert.equal(res.status, 201);
      assert.deepEqual(body, {
        data: { id: body.data.id, mime_type: 'image/gif', size: bytes.length, width: 12, height: 9, duration_ms: null, created_at: body.data.created_at },
      });
      assert.match(body.data.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const stored = await store.loadForUser(userId, body.data.id);
      assert.ok(stored.bytes.equals(bytes));
      assert.deepEqual([stored.origin, stored.sourceUrl], ['upload', null]);
    });

    it('downloads and stores a JSON { url }', async () => {
      const res = await uploadUrl({ url: `${originUrl}/clip` });
      const body = (await res.json()) as UploadBody;
      assert.equal(res.status, 201);
      assert.deepEqual(body, {
        data: { id: body.data.id, mime_type: 'video/mp4', size: clip.length, width: 640, height: 360, duration_ms: 4_500, created_at: body.data.created_at },
      });
      assert.equal((await store.describeForUser(userId, body.data.id)).sourceUrl, `${originUrl}/clip`);
    });

    it('refuses a JSON url holding NUL with 400 naming the field, as every route does, and stores nothing', async () => {
      // The URL parser drops a leading or trailing U+0000, so these fetched the clip and then failed to store (503).
      for (const url of [`\u0000${originUrl}/clip`, `${originUrl}/clip\u0000`]) {
        const before = await mediaCount();
        const res = await uploadUrl({ url });
        assert.deepEqual({ status: res.status, body: await res.json() }, {
          status: 400,
          body: { error: { code: 'bad_request', message: 'url: must not contain the NUL character (\\u0000)' } },
        });
        assert.equal(await mediaCount(), before);
      }
    });

    it('refuses a multipart file name holding NUL as a malformed body (the parser), storing nothing', async () => {
      // The part takes no text field (`fields: 0`) and its name is never read: no NUL of a multipart body reaches a query.
      const before = await mediaCount();
      const res = await upload(gif(2, 2), { filename: 'a\u0000b.gif' });
      assert.deepEqual({ status: res.status, body: await res.json() }, { status: 400, body: { error: { code: 'bad_request', message: 'Malformed multipart body' } } });
      assert.equal(await mediaCount(), before);
    });

    it('refuses a large upload early and still answers the client with the envelope', async () => {
      const started = Date.now();
      const res = await upload(Buffer.alloc(20_000_000, 7));
      assert.deepEqual({ status: res.status, body: await res.json() }, {
        status: 400,
        body: { error: { code: 'unsupported_media', message: 'Media is too large: it exceeds 50 KB, the most Herald accepts' } },
      });
      assert.equal(res.headers.get('connection'), 'close');
      assert.ok(Date.now() - started < 10_000);
    });

    it('gives up on an upload that trickles in, answers the envelope and closes the connection', async () => {
      const boundary = 'herald-test-boundary';
      const answer = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const req = http.request(`${apiUrl}/api/v1/slow-media`, {
          method: 'POST',
          headers: { 'x-user': userId, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '100000' },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        });
        req.on('error', reject);
        req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
        req.write(png(2, 2).subarray(0, 10)); // and then nothing more
      });
      assert.deepEqual({ status: answer.status, body: JSON.parse(answer.body) }, {
        status: 400,
        body: { error: { code: 'bad_request', message: 'The upload did not finish within 1 second' } },
      });
      assert.equal(answer.headers.connection, 'close');
    });

    const refusals: Array<[string, () => Promise<Response>, number, string, string]> = [
      ['an oversized file, while streaming', () => upload(Buffer.alloc(60_000, 1)), 400, 'unsupported_media', 'Media is too large: it exceeds 50 KB, the most Herald accepts'],
      ['an undecodable file', () => upload(Buffer.from('just some text')), 400, 'unsupported_media', 'Media is undecodable: the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file'],
      ['a file under another part name', () => upload(png(1, 1), { field: 'image' }), 400, 'bad_request', 'Unexpected multipart part "image"; send the media as the part "file"'],
      ['an empty multipart body', () => fetch(`${apiUrl}/api/v1/media`, { method: 'POST', body: new FormData(), headers: { 'x-user': userId } }), 400, 'bad_request', 'The multipart body has no "file" part (or it is empty)'],
      ['an oversized URL', () => uploadUrl({ url: `${originUrl}/huge` }), 400, 'unsupported_media', `Media is too large: it exceeds 50 KB, the most Herald accepts (${'URL'}/huge)`],
      ['an undecodable URL', () => uploadUrl({ url: `${originUrl}/page` }), 400, 'unsupported_media', `Media is undecodable: the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file (${'URL'}/page)`],
      ['a URL that answers 404', () => uploadUrl({ url: `${originUrl}/gone.png` }), 400, 'bad_request', `Media URL ${'URL'}/gone.png answered HTTP 404`],
      ['a JSON body with another field', () => uploadUrl({ url: `${originUrl}/clip`, alt: 'x' }), 400, 'bad_request', 'The JSON body must be { "url": "<http(s) URL of an image or video>" } and nothing else'],
      ['a non-http URL', () => uploadUrl({ url: 'file:///etc/passwd' }), 400, 'bad_request', 'Media URL file:///etc/passwd must be an http(s) URL'],
      [
        'another content type',
        () => fetch(`${apiUrl}/api/v1/media`, { method: 'POST', body: png(1, 1), headers: { 'x-user': userId, 'content-type': 'image/png' } }),
        400,
        'bad_request',
        'Send the media as multipart/form-data with a part "file", or as JSON { "url": "https://..." }',
      ],
    ];
    it('refuses a URL whose host resolves to a private address without naming the address', async () => {
      const { hostname, address } = await privatelyResolvedHostname();
      const url = `https://${hostname}/cat.png`;
      const res = await fetch(`${apiUrl}/api/v1/guarded-media`, { method: 'POST', body: JSON.stringify({ url }), headers: { 'x-user': userId, 'content-type': 'application/json' } });
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.deepEqual({ status: res.status, body }, {
        status: 400,
        body: { error: { code: 'bad_request', message: `Media URL ${url} is not allowed: ${hostname} resolves to an address that is not public` } },
      });
      assert.ok(!body.error.message.includes(address));
    });

    for (const [what, send, status, code, message] of refusals) {
      it(`refuses ${what} with the whole envelope and stores nothing`, async () => {
        const before = await mediaCount();
        const res = await send();
        assert.deepEqual({ status: res.status, body: await res.json() }, { status, body: { error: { code, message: message.replace('URL/', `${originUrl}/`) } } });
        assert.equal(await mediaCount(), before);
      });
    }
  });

  describe('GET /media/:id (signed public URL)', () => {
    let id: string;
    const bytes = jpeg(100, 50);
    before(async () => {
      id = (await store.store({ userId, bytes, facts: requireDecodable(bytes), origin: 'url' })).id;
    });
    const notFound = async (url: string) => {
      const res = await fetch(url);
      assert.deepEqual({ status: res.status, body: await res.json() }, { status: 404, body: { error: { code: 'not_found', message: 'Not found' } } });
    };

    it('serves the bytes with their type and length, without an API key', async () => {
      const url = signer.signMediaUrl(id, new Date(Date.now() + 60_000));
      assert.match(url, new RegExp(`^${apiUrl}/media/${id}\\?exp=\\d+&sig=[A-Za-z0-9_-]{43}$`));
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.deepEqual([res.headers.get('content-type'), res.headers.get('content-length'), res.headers.get('x-content-type-options')], ['image/jpeg', String(bytes.length), 'nosniff']);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes));
    });

    it('answers HEAD with the headers only', async () => {
      const res = await fetch(signer.signMediaUrl(id, new Date(Date.now() + 60_000)), { method: 'HEAD' });
      assert.deepEqual([res.status, res.headers.get('content-length'), (await res.arrayBuffer()).byteLength], [200, String(bytes.length), 0]);
    });

    it('answers 404 once expired', async () => {
      await notFound(signer.signMediaUrl(id, new Date(Date.now() - 1_000)));
    });

    it('answers 404 for a tampered signature, expiry or id, and for a missing signature', async () => {
      const url = new URL(signer.signMediaUrl(id, new Date(Date.now() + 60_000)));
      const sig = url.searchParams.get('sig')!;
      const flipped = new URL(url);
      flipped.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
      await notFound(flipped.href);
      const extended = new URL(url);
      extended.searchParams.set('exp', String(Number(url.searchParams.get('exp')) + 3600));
      await notFound(extended.href);
      const otherBytes = png(2, 2);
      const other = await store.store({ userId, bytes: otherBytes, facts: requireDecodable(otherBytes), origin: 'url' });
      await notFound(url.href.replace(id, other.id));
      await notFound(`${apiUrl}/media/${id}`);
      await notFound(`${apiUrl}/media/${id}?exp=${url.searchParams.get('exp')}&sig=short`);
    });

    it('answers 404 for media deleted after signing', async () => {
      const gone = await store.store({ userId, bytes: png(3, 1), facts: requireDecodable(png(3, 1)), origin: 'url' });
      const url = signer.signMediaUrl(gone.id, new Date(Date.now() + 60_000));
      await store.delete(gone.id);
      await notFound(url);
    });

    it('a signature made with another key is refused', () => {
      const stranger = createMediaUrlSigner({ publicBaseUrl: apiUrl, key: randomBytes(32) });
      const url = new URL(stranger.signMediaUrl(id, new Date(Date.now() + 60_000)));
      assert.equal(signer.verifyMediaUrlSignature(id, url.searchParams.get('exp'), url.searchParams.get('sig')), false);
      assert.equal(stranger.verifyMediaUrlSignature(id, url.searchParams.get('exp'), url.searchParams.get('sig')), true);
    });
  });

  describe('ingestMediaUrl (scheduled posts)', () => {
    it('stores a downloaded copy marked for removal after publishing', async () => {
      const record = await ingestMediaUrl({ store, http: client, allowInsecureUrls: true }, { userId, url: `${originUrl}/clip`, origin: 'url' });
      assert.deepEqual([record.origin, record.sourceUrl, record.mimeType, record.durationMs], ['url', `${originUrl}/clip`, 'video/mp4', 4_500]);
      assert.equal(await store.deleteDownloadedCopies([record.id]), 1);
    });

    it('checks the URL before fetching anything', async () => {
      await rejectsWith(
        ingestMediaUrl({ store, http: client, allowInsecureUrls: false }, { userId, url: `${originUrl}/clip`, origin: 'url' }),
        400,
        'bad_request',
        `Media URL ${originUrl}/clip is not allowed: plain http URLs are refused; use https`,
      );
    });
  });

  describe('toMediaItems', () => {
    it('gives adapters the bytes, facts, alt text and a signed public URL', async () => {
      const image = png(4, 2);
      const video = movie({ width: 320, height: 240, duration: 2_000 });
      const a = await store.loadForUser(userId, (await store.store({ userId, bytes: image, facts: requireDecodable(image), origin: 'url' })).id);
      const b = await store.loadForUser(userId, (await store.store({ userId, bytes: video, facts: requireDecodable(video), origin: 'url' })).id);
      const expiresAt = new Date(Date.now() + 60_000);
      const items = toMediaItems([{ media: a, alt: '  A red square ' }, { media: b, alt: '   ' }], (mediaId) => signer.signMediaUrl(mediaId, expiresAt));
      assert.deepEqual(items, [
        { data: image, mimeType: 'image/png', kind: 'image', alt: 'A red square', width: 4, height: 2, publicUrl: signer.signMediaUrl(a.id, expiresAt) },
        { data: video, mimeType: 'video/mp4', kind: 'video', width: 320, height: 240, durationMs: 2_000, publicUrl: signer.signMediaUrl(b.id, expiresAt) },
      ]);
      assert.deepEqual(toMediaItems([{ media: a }]), [{ data: image, mimeType: 'image/png', kind: 'image', width: 4, height: 2 }]);
    });
  });
});
