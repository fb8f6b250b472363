import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type TestApi, request, startApi } from '../helpers/api';

/**
 * Nothing a client sends may crash the process or produce anything but the envelope: random bodies, headers,
 * query strings and paths against the real routes must answer 2xx or a 4xx envelope, never a 5xx.
 */
describe('bad input (property-based)', function () {
  this.timeout(180_000);
  let api: TestApi;
  before(async () => {
    api = await startApi({ plan: 'enterprise' });
  });
  after(() => api.close());

  const routes = ['/api/v1/posts', '/api/v1/keys', '/api/v1/keys/00000000-0000-4000-8000-000000000000', '/api/v1/nope', '/api/v1/keys/x'];
  const methods = ['GET', 'POST', 'DELETE', 'PATCH', 'PUT'];
  const token = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz_-.[]%0123456789') });
  const headerValue = fc.string({ maxLength: 40, unit: fc.constantFrom(...' abcXYZ0123456789-_=;,/:.*"\'') });

  function assertEnvelope(res: { status: number; body: unknown; text: string }, context: string) {
    assert.ok(res.status < 500, `${context} → ${res.status} ${res.text.slice(0, 200)}`);
    if (res.status >= 400) {
      const body = res.body as { error?: { code?: unknown; message?: unknown } };
      assert.equal(typeof body?.error?.code, 'string', `${context} → ${res.text.slice(0, 200)}`);
      assert.equal(typeof body?.error?.message, 'string', context);
    }
  }

  it('random JSON bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.constantFrom(...methods), fc.jsonValue({ maxDepth: 3 }), async (path, method, body) => {
        const res = await api.request(method, path, method === 'GET' ? {} : { body });
        assertEnvelope(res, `${method} ${path} ${JSON.stringify(body).slice(0, 100)}`);
      }),
      { numRuns: 150 },
    );
  });

  it('random raw bodies and content types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.constantFrom('POST', 'DELETE', 'PATCH'),
        fc.string({ maxLength: 300 }),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', ''),
        async (path, method, rawBody, contentType) => {
          const res = await api.request(method, path, { rawBody, headers: { 'content-type': contentType } });
          assertEnvelope(res, `${method} ${path} [${contentType}] ${JSON.stringify(rawBody).slice(0, 100)}`);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('random query strings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.array(fc.tuple(fc.oneof(fc.constantFrom('limit', 'offset', 'status', 'group_id', 'account_id', 'include_hidden'), token), fc.oneof(token, fc.constant(''), fc.integer().map(String))), { maxLength: 5 }),
        async (path, pairs) => {
          const query = pairs.map(([name, value]) => `${name}=${value}`).join('&');
          const res = await api.request('GET', `${path}?${query}`);
          assertEnvelope(res, `GET ${path}?${query}`);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('random headers, including Authorization and Idempotency-Key', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.constantFrom(...methods),
        fc.option(fc.oneof(headerValue, headerValue.map((v) => `Bearer ${v}`), fc.constant(`Bearer ${'x'.repeat(5000)}`)), { nil: undefined }),
        fc.dictionary(fc.constantFrom('idempotency-key', 'x-request-id', 'accept', 'content-encoding', 'content-type', 'x-forwarded-for'), headerValue),
        async (path, method, authorization, headers) => {
          const res = await request(api.url, method, path, {
            key: null,
            headers: { ...headers, ...(authorization === undefined ? { authorization: `Bearer ${api.apiKey}` } : { authorization }) },
            rawBody: method === 'GET' ? undefined : '{"name":"k"}',
          });
          assertEnvelope(res, `${method} ${path} ${JSON.stringify({ authorization, headers }).slice(0, 200)}`);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('random paths', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(token, fc.constantFrom('%', '%E0%A4%A', '..', '%00', 'keys', 'posts')), { maxLength: 4 }), fc.constantFrom(...methods), async (segments, method) => {
        const path = `/api/v1/${segments.join('/')}`;
        const res = await api.request(method, path);
        assertEnvelope(res, `${method} ${path}`);
      }),
      { numRuns: 150 },
    );
  });
});
