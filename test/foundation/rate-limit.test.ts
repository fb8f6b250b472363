import assert from 'node:assert/strict';
import { type TestApi, request, startApi } from '../helpers/api';
import { testDatabase } from '../helpers/db';

describe('burst rate limit', () => {
  let a: TestApi;
  let b: TestApi;
  before(async () => {
    const database = await testDatabase();
    a = await startApi({ plan: 'free', database });
    b = await startApi({ plan: 'free', database });
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  it('sets X-RateLimit headers on authenticated responses, success and error alike', async () => {
    const user = await a.newUser('agent');
    const before = Math.floor(Date.now() / 1000);
    const ok = await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-ratelimit-limit'), '300');
    assert.equal(ok.headers.get('x-ratelimit-remaining'), '299');
    // The window opens when the request is served, somewhere between these two readings (seconds apart under load).
    const after = Math.ceil(Date.now() / 1000);
    const reset = Number(ok.headers.get('x-ratelimit-reset'));
    assert.ok(reset >= before + 59 && reset <= after + 61, `reset ${reset} is about a minute after the request (${before}–${after})`);
    const bad = await request(a.url, 'GET', '/api/v1/posts?limit=0', { key: user.apiKey });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('x-ratelimit-remaining'), '298');
  });

  it('counts one limit per key across two API instances sharing the database, then answers 429 with Retry-After', async function () {
    this.timeout(120_000);
    const user = await a.newUser('free');
    for (let i = 0; i < 120; i++) {
      const api = i % 2 === 0 ? a : b;
      const res = await request(api.url, 'GET', '/api/v1/posts', { key: user.apiKey });
      assert.equal(res.status, 200, `request ${i + 1}`);
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(119 - i));
    }
    for (const api of [a, b]) {
      const res = await request(api.url, 'GET', '/api/v1/posts', { key: user.apiKey });
      assert.equal(res.status, 429);
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(res.headers.get('x-ratelimit-limit'), '120');
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
      assert.deepEqual(res.body, {
        error: {
          code: 'rate_limited',
          message: `Rate limit of 120 requests per minute exceeded for this API key; retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`,
        },
      });
    }
    // Another key of another user is unaffected.
    const other = await a.newUser('free');
    assert.equal((await request(b.url, 'GET', '/api/v1/posts', { key: other.apiKey })).status, 200);
  });

  it('starts a new window after the old one expires', async () => {
    const user = await a.newUser('free');
    await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    // Age the window as if a minute had passed.
    await a.deps.pool.query(`update rate_limits set expire = $1 where key = $2`, [Date.now() - 1, `burst:${user.keyId}`]);
    const res = await request(b.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal(res.headers.get('x-ratelimit-remaining'), '119');
  });

  it('does not set rate-limit headers on unauthenticated answers', async () => {
    const res = await request(a.url, 'GET', '/api/v1/posts', { key: 'hld_nope' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-ratelimit-limit'), null);
  });
});
