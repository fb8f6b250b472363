import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { downloadMedia } from '../../src/media/download';
import { checkMediaUrl } from '../../src/media/media-url';
import { rejectsWith } from './assert-error';
import { movie, png } from './fixtures';

describe('media download', () => {
  const image = png(4, 3);
  const video = movie();
  let server: http.Server;
  let origin: string;
  let insecure: HttpClient;
  const hits: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url!);
      const path = req.url!;
      if (path === '/cat.png') return res.writeHead(200, { 'content-type': 'text/plain' }).end(image);
      if (path === '/clip') return res.writeHead(200).end(video);
      if (path === '/page.html') return res.writeHead(200, { 'content-type': 'image/png' }).end('<html>hello</html>');
      if (path === '/missing.png') return res.writeHead(404).end('not here');
      if (path === '/declared-big') {
        res.writeHead(200, { 'content-length': String(50_000) });
        return res.write(Buffer.alloc(100)); // never finishes: only the header can have refused it
      }
      if (path === '/streamed-big') {
        res.writeHead(200); // chunked, no length announced
        let sent = 0;
        const timer = setInterval(() => {
          if (res.destroyed || sent > 100_000) return clearInterval(timer);
          res.write(Buffer.alloc(500, 1));
          sent += 500;
        }, 2);
        return;
      }
      if (path === '/slow') return; // never answers
      const hop = /^\/hop\/(\d+)$/.exec(path);
      if (hop) {
        const n = Number(hop[1]);
        return res.writeHead(302, { location: n === 0 ? '/cat.png' : `/hop/${n - 1}` }).end();
      }
      if (path === '/to-metadata') return res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      if (path === '/to-private') return res.writeHead(307, { location: 'https://10.1.2.3/cat.png' }).end();
      if (path === '/no-location') return res.writeHead(302).end();
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    insecure = createHttpClient({ allowInsecure: true });
  });

  after(async () => {
    await insecure.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('downloads an image and reads its facts from the bytes, not the Content-Type', async () => {
    const result = await downloadMedia(`${origin}/cat.png`, { http: insecure, maxBytes: 10_000, timeoutMs: 5_000 });
    assert.deepEqual(result.facts, { mimeType: 'image/png', kind: 'image', format: 'png', size: image.length, width: 4, height: 3, durationMs: null });
    assert.ok(result.bytes.equals(image));
    assert.equal(result.finalUrl, `${origin}/cat.png`);
  });

  it('downloads a video from a URL without an extension', async () => {
    const result = await downloadMedia(`${origin}/clip`, { http: insecure, maxBytes: 10_000, timeoutMs: 5_000 });
    assert.deepEqual(result.facts, { mimeType: 'video/mp4', kind: 'video', format: 'mp4', size: video.length, width: 1280, height: 720, durationMs: 12_345 });
  });

  it('follows up to three redirects, each through the client', async () => {
    hits.length = 0;
    const result = await downloadMedia(`${origin}/hop/2`, { http: insecure, maxBytes: 10_000, timeoutMs: 5_000 });
    assert.equal(result.finalUrl, `${origin}/cat.png`);
    assert.deepEqual(hits, ['/hop/2', '/hop/1', '/hop/0', '/cat.png']);
  });

  it('refuses a fourth redirect', async () => {
    const url = `${origin}/hop/3`;
    await rejectsWith(downloadMedia(url, { http: insecure, maxBytes: 10_000, timeoutMs: 5_000 }), 400, 'bad_request', `Media URL ${url} redirects more than 3 times`);
  });

  it('refuses a redirect without a Location', async () => {
    const url = `${origin}/no-location`;
    await rejectsWith(downloadMedia(url, { http: insecure, timeoutMs: 5_000 }), 400, 'bad_request', `Media URL ${url} answered HTTP 302 without a Location`);
  });

  it('refuses a body announced bigger than the cap without reading it', async () => {
    const url = `${origin}/declared-big`;
    await rejectsWith(downloadMedia(url, { http: insecure, maxBytes: 10_000, timeoutMs: 5_000 }), 400, 'unsupported_media', `Media is too large: it exceeds 10 KB, the most Herald accepts (${url})`);
  });

  it('stops reading a body that grows past the cap', async () => {
    const url = `${origin}/streamed-big`;
    const started = Date.now();
    await rejectsWith(downloadMedia(url, { http: insecure, maxBytes: 10_000, timeoutMs: 20_000 }), 400, 'unsupported_media', `Media is too large: it exceeds 10 KB, the most Herald accepts (${url})`);
    assert.ok(Date.now() - started < 5_000, 'refused while streaming, long before the server stopped');
  });

  it('gives up on a server that does not answer in time', async () => {
    const url = `${origin}/slow`;
    const started = Date.now();
    await rejectsWith(downloadMedia(url, { http: insecure, maxBytes: 10_000, timeoutMs: 1_000 }), 400, 'bad_request', `Media URL ${url} did not finish downloading within 1 second`);
    assert.ok(Date.now() - started < 3_000);
  });

  it('names the status of a non-2xx answer', async () => {
    const url = `${origin}/missing.png`;
    await rejectsWith(downloadMedia(url, { http: insecure, timeoutMs: 5_000 }), 400, 'bad_request', `Media URL ${url} answered HTTP 404`);
  });

  it('refuses bytes that are not media, whatever the Content-Type says', async () => {
    const url = `${origin}/page.html`;
    await rejectsWith(
      downloadMedia(url, { http: insecure, timeoutMs: 5_000 }),
      400,
      'unsupported_media',
      `Media is undecodable: the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file (${url})`,
    );
  });

  it('refuses an unreachable host as bad_request naming the URL', async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const url = `http://127.0.0.1:${port}/cat.png`;
    await rejectsWith(downloadMedia(url, { http: insecure, timeoutMs: 5_000 }), 400, 'bad_request', `Media URL ${url} could not be reached`);
  });

  describe('with the guard on (allowInsecure: false)', () => {
    let guarded: HttpClient;
    /** The first hop reaches the local server; every later hop goes through the guarded client, as in production. */
    let routed: HttpClient;
    before(() => {
      guarded = createHttpClient({ allowInsecure: false });
      routed = {
        request: (req) => (String(req.url).startsWith(origin) ? insecure.request(req) : guarded.request(req)),
        close: async () => undefined,
      };
    });
    after(() => guarded.close());

    it('refuses a loopback URL outright', async () => {
      const url = `${origin}/cat.png`;
      await rejectsWith(downloadMedia(url, { http: guarded, timeoutMs: 5_000 }), 400, 'bad_request', `Media URL ${url} is not allowed: plain http URLs are refused; use https`);
    });

    it('refuses a redirect to the cloud metadata address', async () => {
      const url = `${origin}/to-metadata`;
      await rejectsWith(
        downloadMedia(url, { http: routed, timeoutMs: 5_000 }),
        400,
        'bad_request',
        `Media URL ${url} is not allowed (redirected to http://169.254.169.254): plain http URLs are refused; use https`,
      );
    });

    it('refuses a redirect to a private address', async () => {
      const url = `${origin}/to-private`;
      await rejectsWith(
        downloadMedia(url, { http: routed, timeoutMs: 5_000 }),
        400,
        'bad_request',
        `Media URL ${url} is not allowed (redirected to https://10.1.2.3): 10.1.2.3 is not a public address`,
      );
    });
  });
});

describe('media URL check (before download)', () => {
  it('accepts an https URL and takes its extension as a hint', () => {
    const checked = checkMediaUrl('https://cdn.example.com/a/b/Photo.JPG?size=large', { allowInsecure: false });
    assert.deepEqual([checked.url.href, checked.hint], ['https://cdn.example.com/a/b/Photo.JPG?size=large', { format: 'jpeg', kind: 'image' }]);
    assert.deepEqual(checkMediaUrl('https://cdn.example.com/v/clip.mov', { allowInsecure: false }).hint, { format: 'mov', kind: 'video' });
    assert.equal(checkMediaUrl('https://cdn.example.com/media/12345', { allowInsecure: false }).hint, null);
    assert.equal(checkMediaUrl('https://cdn.example.com/image.php', { allowInsecure: false }).hint, null);
  });

  it('gives no hint for a type it does not publish: the post rules word that refusal per platform', () => {
    assert.equal(checkMediaUrl('https://cdn.example.com/report.pdf', { allowInsecure: false }).hint, null);
    assert.equal(checkMediaUrl('https://cdn.example.com/clip.webm', { allowInsecure: false }).hint, null);
  });

  it('refuses what is not an https URL to a public host', async () => {
    await rejectsWith(() => checkMediaUrl('not a url', { allowInsecure: false }), 400, 'bad_request', 'Media URL not a url is not a valid URL');
    await rejectsWith(() => checkMediaUrl('ftp://example.com/a.png', { allowInsecure: false }), 400, 'bad_request', 'Media URL ftp://example.com/a.png must be an http(s) URL');
    await rejectsWith(() => checkMediaUrl('http://example.com/a.png', { allowInsecure: false }), 400, 'bad_request', 'Media URL http://example.com/a.png is not allowed: plain http URLs are refused; use https');
    await rejectsWith(() => checkMediaUrl('https://192.168.1.10/a.png', { allowInsecure: false }), 400, 'bad_request', 'Media URL https://192.168.1.10/a.png is not allowed: 192.168.1.10 is not a public address');
    await rejectsWith(() => checkMediaUrl('https://localhost/a.png', { allowInsecure: false }), 400, 'bad_request', 'Media URL https://localhost/a.png is not allowed: localhost is not a public address');
    const long = `https://example.com/${'a'.repeat(2100)}`;
    await rejectsWith(() => checkMediaUrl(long, { allowInsecure: false }), 400, 'bad_request', `Media URL ${long.slice(0, 197)}... is longer than 2048 characters`);
  });

  it('lets loopback http through in development', () => {
    assert.equal(checkMediaUrl('http://127.0.0.1:9/a.gif', { allowInsecure: true }).hint?.format, 'gif');
  });
});
