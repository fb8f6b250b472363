import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineRoute } from '../../api/route';
import { apiRoutes } from '../../api/routes';
import { ApiError } from '../../src/errors';
import { type TestApi, request, startApi, testConfig } from '../helpers/api';

const failingRoutes = [
  defineRoute({
    method: 'get',
    path: '/test/crash',
    summary: 'throws an unexpected error',
    scope: null,
    responses: { 200: { description: 'never' } },
    handler: async () => {
      throw new Error('database password is hunter2');
    },
  }),
  defineRoute({
    method: 'post',
    path: '/test/echo',
    summary: 'echoes a body',
    scope: null,
    body: z.strictObject({ text: z.string().max(5), nested: z.object({ n: z.number().int() }).optional() }),
    responses: { 200: { description: 'the body' } },
    handler: async ({ body }) => ({ status: 200, body: { data: body } }),
  }),
  defineRoute({
    method: 'get',
    path: '/test/rollback',
    summary: 'throws an ApiError with extra members and headers',
    scope: null,
    responses: { 200: { description: 'never' } },
    handler: async () => {
      throw new ApiError('comment_sync_rate_limited', 'x is rate limiting comment reads', { detail: 1 }, { 'Retry-After': '30' });
    },
  }),
];

describe('error envelope', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi({ routes: [...apiRoutes, ...failingRoutes], deps: { config: testConfig({ HERALD_BODY_LIMIT: '1kb' }) } });
  });
  after(() => api.close());

  it('answers malformed JSON with 400 bad_request', async () => {
    const res = await api.request('POST', '/api/v1/test/echo', { rawBody: '{"text": ', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'bad_request');
    assert.match(res.body.error.message, /^Malformed JSON body: /);
    assert.deepEqual(Object.keys(res.body.error), ['code', 'message']);
  });

  it('answers a non-JSON content type with 400 bad_request (not 415)', async () => {
    const res = await api.request('POST', '/api/v1/test/echo', { rawBody: 'text=hi', headers: { 'content-type': 'text/plain' } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      error: { code: 'bad_request', message: 'Unsupported Content-Type text/plain: send the body as JSON with Content-Type: application/json' },
    });
  });

  it('answers a body without content type with 400 bad_request', async () => {
    const res = await api.request('POST', '/api/v1/test/echo', { rawBody: '{"text":"hi"}', headers: { 'content-type': '' } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      error: { code: 'bad_request', message: 'Missing Content-Type: send the body as JSON with Content-Type: application/json' },
    });
  });

  it('accepts application/json with a charset', async () => {
    const res = await api.request('POST', '/api/v1/test/echo', {
      rawBody: '{"text":"hi"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { text: 'hi' } });
  });

  it('answers an oversized body with 400 bad_request naming the limit', async () => {
    const res = await api.request('POST', '/api/v1/test/echo', { body: { text: 'x'.repeat(2000) } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: { code: 'bad_request', message: 'Request body is too large (the limit is 1 KB)' } });
  });

  it('names the failing field of a zod validation, nested paths included', async () => {
    const cases: Array<[unknown, string]> = [
      [{ text: 'toolong' }, 'text: Too big: expected string to have <=5 characters'],
      [{ text: 'ok', nested: { n: 1.5 } }, 'nested.n: Invalid input: expected int, received number'],
      [{ text: 'ok', extra: 1, more: 2 }, 'Unknown fields: extra, more'],
      [{}, 'text is required'],
    ];
    for (const [body, message] of cases) {
      const res = await api.request('POST', '/api/v1/test/echo', { body });
      assert.deepEqual(res.body, { error: { code: 'bad_request', message } }, JSON.stringify(body));
      assert.equal(res.status, 400);
    }
  });

  it('answers a body-requiring route without a body', async () => {
    const res = await api.request('POST', '/api/v1/test/echo');
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: { code: 'bad_request', message: 'A JSON object body is required' } });
  });

  it('answers an unknown /api/v1 route with 404 not_found', async () => {
    const res = await api.request('PATCH', '/api/v1/keys');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: 'not_found', message: 'No route PATCH /api/v1/keys' } });
    assert.equal(res.headers.get('x-ratelimit-limit'), '120');
  });

  it('answers a path outside the API with 404 in the envelope', async () => {
    const res = await request(api.url, 'GET', '/nothing/here');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: 'not_found', message: 'No route GET /nothing/here' } });
  });

  it('answers an unknown query parameter with 400', async () => {
    const res = await api.request('GET', '/api/v1/keys?verbose=1');
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: { code: 'bad_request', message: 'Unknown query parameter: verbose' } });
  });

  it('answers an undecodable path with 400', async () => {
    const res = await api.request('DELETE', '/api/v1/keys/%E0%A4%A');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'bad_request');
  });

  it('hides unexpected failures behind 500 internal_error', async () => {
    const res = await api.request('GET', '/api/v1/test/crash');
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, {
      error: {
        code: 'internal_error',
        message: 'An unexpected error occurred; it has been logged. Quote the X-Request-Id header when reporting it',
      },
    });
    assert.ok(!res.text.includes('hunter2'));
  });

  it('carries an ApiError\'s extra members and headers', async () => {
    const res = await api.request('GET', '/api/v1/test/rollback');
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '30');
    assert.deepEqual(res.body, { error: { code: 'comment_sync_rate_limited', message: 'x is rate limiting comment reads', detail: 1 } });
  });

  it('sets X-Request-Id on every response, keeping a sane client id', async () => {
    const own = await api.request('GET', '/api/v1/posts', { headers: { 'x-request-id': 'client-abc.123' } });
    assert.equal(own.headers.get('x-request-id'), 'client-abc.123');
    const generated = await api.request('GET', '/api/v1/posts', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(generated.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
    const unauthenticated = await request(api.url, 'GET', '/api/v1/posts');
    assert.match(unauthenticated.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
  });
});
