import assert from 'node:assert/strict';
import net from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger';
import { type TestApi, request, startApi } from '../helpers/api';

/** A real TCP probe against a port where nothing listens: the way a dead dependency looks. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function tcpCheck(port: number) {
  return () =>
    new Promise<void>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve();
      });
      socket.on('error', reject);
    });
}

describe('health, readiness, OpenAPI and docs', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  it('GET /healthz answers 200 without a key', async () => {
    const res = await request(api.url, 'GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('GET /readyz answers 200 when every dependency answers', async () => {
    const res = await request(api.url, 'GET', '/readyz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok', checks: { database: 'ok' } });
  });

  it('GET /readyz answers 503 in the envelope naming what is unreachable', async () => {
    const dead = await closedPort();
    const notReady = await startApi({ deps: { probes: [{ name: 'temporal', check: tcpCheck(dead) }] } });
    try {
      const res = await request(notReady.url, 'GET', '/readyz');
      assert.equal(res.status, 503);
      assert.deepEqual(res.body, {
        error: {
          code: 'service_unavailable',
          message: 'Not ready: temporal unreachable',
          checks: { database: 'ok', temporal: 'unreachable' },
        },
      });
    } finally {
      await notReady.close();
    }
  });

  it('serves the OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await request(api.url, 'GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.equal(doc.openapi, '3.1.0');
    for (const path of ['/api/v1/keys', '/api/v1/keys/{id}', '/api/v1/posts']) assert.ok(doc.paths[path], path);
    const list = doc.paths['/api/v1/posts'].get;
    assert.deepEqual(
      list.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(),
      ['query:account_id', 'query:group_id', 'query:include_hidden', 'query:limit', 'query:offset', 'query:status'],
    );
    assert.deepEqual(Object.keys(list.responses).sort(), ['200', '400', '401', '403', '429', '500']);
    assert.ok(doc.components.schemas.Post, 'Post schema registered');
    assert.deepEqual(list.security, [{ bearerAuth: [] }]);
    assert.deepEqual(Object.keys(doc.paths['/api/v1/keys/{id}'].delete.responses).sort(), ['200', '400', '401', '403', '404', '429', '500']);
  });

  it('documents the media upload (POST /api/v1/media, an Express router of its own) in the OpenAPI document', async () => {
    const doc = (await request(api.url, 'GET', '/api/v1/openapi.json')).body;
    const upload = doc.paths['/api/v1/media']?.post;
    assert.ok(upload, 'POST /api/v1/media is documented');
    assert.deepEqual(upload.security, [{ bearerAuth: [] }]);
    assert.match(upload.description, /Scope: `posts:write`/);
    const bodies = upload.requestBody.content;
    assert.deepEqual(Object.keys(bodies).sort(), ['application/json', 'multipart/form-data']);
    assert.deepEqual(bodies['multipart/form-data'].schema.properties.file, { type: 'string', format: 'binary', description: 'The image or video file' });
    assert.deepEqual(bodies['application/json'].schema.required, ['url']);
    assert.deepEqual(Object.keys(upload.responses).sort(), ['201', '400', '401', '403', '429', '500', '503']);
    assert.deepEqual(upload.responses['400'].content['application/json'].schema.properties.error.properties.code.enum, ['bad_request', 'unsupported_media']);
    assert.ok(upload.responses['429'].content['application/json'].schema.properties.error.properties.code.enum.includes('usage_limit_exceeded'));
    assert.deepEqual(Object.keys(doc.paths['/api/v1/media']).sort(), ['get', 'post']);
    assert.deepEqual(Object.keys(doc.paths['/api/v1/media/{id}']).sort(), ['delete', 'get']);
    const created = upload.responses['201'].content['application/json'].schema.properties.data;
    assert.deepEqual(Object.keys(created.properties), ['id', 'mime_type', 'size', 'width', 'height', 'duration_ms', 'created_at']);
  });

  it('serves the human-readable reference at /docs from local files (no CDN)', async () => {
    const page = await request(api.url, 'GET', '/docs/');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /text\/html/);
    assert.match(page.text, /Herald API reference/);
    assert.ok(!/<(script|link)[^>]+(src|href)="https?:/.test(page.text), 'no remote scripts or styles');
    const css = await request(api.url, 'GET', '/docs/swagger-ui.css');
    assert.equal(css.status, 200);
    const init = await request(api.url, 'GET', '/docs/swagger-ui-init.js');
    assert.equal(init.status, 200);
    assert.match(init.text, /\/api\/v1\/posts/);
  });

  it('logs JSON lines that all carry the request id of the X-Request-Id header', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const logged = await startApi({ deps: { logger: createLogger('info', sink) } });
    try {
      const res = await logged.request('GET', '/api/v1/posts?limit=0', { headers: { 'x-request-id': 'trace-me-1' } });
      assert.equal(res.headers.get('x-request-id'), 'trace-me-1');
      const mine = lines.map((line) => JSON.parse(line)).filter((entry) => entry.request_id === 'trace-me-1');
      assert.equal(mine.length, 1);
      assert.deepEqual(
        { level: mine[0].level, req: mine[0].req, res: mine[0].res },
        { level: 'info', req: { method: 'GET', url: '/api/v1/posts?limit' }, res: { status: 400 } },
      );
      assert.ok(lines.every((line) => JSON.parse(line).request_id !== undefined), 'every request line has an id');
    } finally {
      await logged.close();
    }
  });
});
