// Herald's outbound HTTP client (`src/net/http.ts`) against a local server: what adapters rely on when an answer is
// slow, too big, missing or repeated a header, and what the address guard refuses.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertFetchableUrl, BlockedAddressError, isPublicAddress } from '../../src/net/address-guard';
import { createHttpClient, ResponseTooLargeError, TransportError, type HttpClient } from '../../src/net/http';

describe('Outbound HTTP client', () => {
  let server: http.Server;
  let origin: string;
  let client: HttpClient;
  const seen: http.IncomingHttpHeaders[] = [];
  /** Paths whose connection the client closed before the server answered. */
  const closedUnanswered: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      res.on('close', () => void (res.writableFinished || closedUnanswered.push(req.url ?? '')));
      if (req.url === '/slow-answer') return void setTimeout(() => res.end('late'), 2_000);
      if (req.url === '/slow-body') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first part;');
        return void setTimeout(() => res.end('second part'), 2_000);
      }
      if (req.url === '/big-declared') {
        res.writeHead(200, { 'content-length': '5000' });
        return void res.end('x'.repeat(5000));
      }
      if (req.url === '/json-array-50mb') {
        res.writeHead(200, { 'content-type': 'application/json' });
        // [0,0,...,0]: 26,214,399 zeros, 52,428,799 bytes.
        return void res.end(Buffer.concat([Buffer.from('[0'), Buffer.alloc(2 * (25 * 1024 * 1024 - 2), ',0'), Buffer.from(']')]));
      }
      if (req.url === '/big-streamed') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end('y'.repeat(5000));
      }
      res.setHeader('x-repeated', ['a', 'b']);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = createHttpClient({ allowInsecure: true, timeoutMs: 300, maxResponseBytes: 1000 });
  });

  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });

  it('answers status, JSON and headers; a repeated header reads joined, as WHATWG Headers does', async () => {
    const res = await client.request({ url: `${origin}/ok`, query: { a: 1, skipped: undefined } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { ok: true });
    assert.equal(res.headers.get('X-Repeated'), 'a, b');
    assert.equal(res.headers.get('absent'), null);
    const names: string[] = [];
    res.headers.forEach((_, name) => names.push(name));
    assert.ok(names.includes('content-type') && names.includes('x-repeated'));
  });

  it("sends one content-type, the caller's, whatever its case", async () => {
    seen.length = 0;
    await client.request({ method: 'POST', url: `${origin}/ok`, headers: { 'Content-Type': 'application/vnd.x+json' }, json: { a: 1 } });
    assert.equal(seen[0]!['content-type'], 'application/vnd.x+json');
    assert.equal(seen[0]!['content-length'], '7');
  });

  it('a timeout before the answer, or while its body streams, is an unknown outcome', async () => {
    for (const path of ['/slow-answer', '/slow-body']) {
      const err = await client.request({ url: `${origin}${path}` }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof TransportError, path);
      assert.equal(err.phase, 'unknown');
      assert.equal(err.message, 'request timed out');
    }
  });

  it("a caller's signal ends the call at once, before the answer or while its body streams, and closes its connection", async () => {
    for (const path of ['/slow-answer', '/slow-body']) {
      closedUnanswered.length = 0;
      const caller = new AbortController();
      const started = Date.now();
      setTimeout(() => caller.abort(), 50);
      const err = await client.request({ url: `${origin}${path}`, timeoutMs: 5_000, signal: caller.signal }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof TransportError, path);
      assert.equal(err.phase, 'unknown');
      assert.equal(err.message, 'request cancelled by its caller');
      assert.ok(Date.now() - started < 1_000, `${path}: ended at the abort, not the timeout`);
      for (let i = 0; i < 50 && closedUnanswered.length === 0; i += 1) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(closedUnanswered, [path], 'the server sees the connection closed before its answer');
    }
    const already = await client.request({ url: `${origin}/ok`, signal: AbortSignal.abort() }).then(() => null, (e: unknown) => e);
    assert.ok(already instanceof TransportError && already.message === 'request cancelled by its caller', 'a signal aborted before the call ends it too');
  });

  it('with statusOnly, the deadline ends at the status; a body slower than bodyMs is answered empty, not a timeout', async () => {
    const res = await client.request({ url: `${origin}/slow-body`, statusOnly: { bodyMs: 100 } });
    assert.equal(res.status, 200);
    assert.equal(res.bytes.length, 0);
    const slowStatus = await client.request({ url: `${origin}/slow-answer`, statusOnly: { bodyMs: 5_000 } }).then(() => null, (e: unknown) => e);
    assert.ok(slowStatus instanceof TransportError && slowStatus.message === 'request timed out', 'the status itself still has timeoutMs');
    const whole = await client.request({ url: `${origin}/ok`, statusOnly: { bodyMs: 100 } });
    assert.deepEqual(whole.json, { ok: true });
  });

  it('an answer read as bytes is never decoded: 50 MB of JSON holds its bytes, not a string and a parsed array', async function () {
    this.timeout(30_000);
    const gc = (globalThis as { gc?: () => void }).gc;
    const heapBefore = (gc?.(), process.memoryUsage().heapUsed);
    const res = await client.request({ url: `${origin}/json-array-50mb`, maxBytes: 60 * 1024 * 1024, timeoutMs: 20_000 });
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    assert.equal(res.bytes.length, 50 * 1024 * 1024 - 1);
    // Decoded, the text alone is 50 MB of heap and the array of 26 million zeros about 200 MB more.
    assert.ok(heapGrowth < 25 * 1024 * 1024, `heap grew ${(heapGrowth / 1024 / 1024).toFixed(1)} MB for an answer read as bytes`);
    assert.equal(res.text.length, 50 * 1024 * 1024 - 1, 'the text is there when read');
    assert.equal((res.json as number[]).length, 26_214_399);
  });

  it('an answer over the cap fails, declared or counted while reading', async () => {
    for (const path of ['/big-declared', '/big-streamed']) {
      const err = await client.request({ url: `${origin}${path}` }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof ResponseTooLargeError, path);
    }
    const allowed = await client.request({ url: `${origin}/big-streamed`, maxBytes: 10_000 });
    assert.equal(allowed.text.length, 5000);
  });

  it('with overCap: truncate, an answer over the cap is its first maxBytes, declared or counted while reading', async () => {
    for (const path of ['/big-declared', '/big-streamed']) {
      const res = await client.request({ url: `${origin}${path}`, maxBytes: 100, overCap: 'truncate' });
      assert.equal(res.status, 200, path);
      assert.equal(res.bytes.length, 100, path);
    }
    const whole = await client.request({ url: `${origin}/ok`, overCap: 'truncate' });
    assert.deepEqual(whole.json, { ok: true });
  });

  it('only public unicast addresses are public, in every spelling', () => {
    const notPublic = [
      ...['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1'],
      ...['::1', '::', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::7f00:1', '::127.0.0.1', 'fc00::1', 'fd12::1', 'fe80::1', '64:ff9b::a00:1'],
      ...['2002:a00:1::1', '2001::1', '2001:db8::1', 'ff02::1', '100::1', 'not an address'],
    ];
    const isPublic = ['8.8.8.8', '1.1.1.1', '::ffff:8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001::1'];
    assert.deepEqual(notPublic.filter(isPublicAddress), [], 'none of these is public');
    assert.deepEqual(isPublic.filter((a) => !isPublicAddress(a)), [], 'all of these are public');
    const refused = ['https://[::7f00:1]/x', 'file:///etc/passwd', 'data:text/plain,hi', 'gopher://example.com/', 'https://user:pw@example.com/', 'https://localhost/', 'http://example.com/'];
    for (const url of refused) assert.throws(() => assertFetchableUrl(url, false), BlockedAddressError, url);
  });

  it('a refused connection surely did not send; a private address is refused outside development', async () => {
    const refused = await client.request({ url: 'http://127.0.0.1:1/' }).then(() => null, (e: unknown) => e);
    assert.ok(refused instanceof TransportError);
    assert.equal(refused.phase, 'not_sent');
    const guarded = createHttpClient({ allowInsecure: false });
    try {
      const blocked = await guarded.request({ url: 'https://10.0.0.1/' }).then(() => null, (e: unknown) => e);
      assert.ok(blocked instanceof TransportError);
      assert.equal(blocked.blocked, true);
    } finally {
      await guarded.close();
    }
  });
});
