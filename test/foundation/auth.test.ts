import assert from 'node:assert/strict';
import { revokeApiKey } from '../../src/auth/api-keys';
import { type TestApi, startApi } from '../helpers/api';

describe('authentication', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi({ plan: 'free' });
  });
  after(() => api.close());

  it('lists posts with a valid key', async () => {
    const res = await api.request('GET', '/api/v1/posts');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: [] });
  });

  it('refuses a request without a key', async () => {
    const res = await api.request('GET', '/api/v1/posts', { key: null });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, {
      error: { code: 'unauthorized', message: 'Missing API key: send the header Authorization: Bearer <API_KEY>' },
    });
    assert.equal(res.headers.get('x-ratelimit-limit'), null);
  });

  it('refuses a malformed Authorization header', async () => {
    const res = await api.request('GET', '/api/v1/posts', { key: null, headers: { authorization: `Token ${api.apiKey}` } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, {
      error: { code: 'unauthorized', message: 'Malformed Authorization header: expected Authorization: Bearer <API_KEY>' },
    });
  });

  it('refuses an unknown key, and a key-shaped string that matches nothing', async () => {
    for (const key of ['nope', `${api.apiKey.slice(0, -1)}${api.apiKey.endsWith('a') ? 'b' : 'a'}`]) {
      const res = await api.request('GET', '/api/v1/posts', { key });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: { code: 'unauthorized', message: 'Invalid API key' } });
    }
  });

  it('tells a revoked key from an invalid one', async () => {
    const other = await api.newUser('free');
    const revoked = await revokeApiKey(api.deps.db, other.keyId, other.userId);
    const res = await api.request('GET', '/api/v1/posts', { key: other.apiKey });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, {
      error: { code: 'unauthorized', message: `This API key was revoked on ${revoked!.revoked_at!.toISOString()}; use another key` },
    });
  });

  it('tells an expired key from an invalid one', async () => {
    const other = await api.newUser('free');
    const expiresAt = new Date(Date.now() - 1000);
    await api.deps.db.updateTable('api_keys').set({ expires_at: expiresAt }).where('id', '=', other.keyId).execute();
    const res = await api.request('GET', '/api/v1/posts', { key: other.apiKey });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, {
      error: { code: 'unauthorized', message: `This API key expired on ${expiresAt.toISOString()}; create a new key` },
    });
  });

  it('answers 403 insufficient_scope naming the missing scope', async () => {
    const other = await api.newUser('free', ['posts:write']);
    const res = await api.request('GET', '/api/v1/posts', { key: other.apiKey });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      error: { code: 'insufficient_scope', message: 'This API key lacks the scope posts:read, which this request needs' },
    });
    assert.equal(res.headers.get('x-ratelimit-limit'), '120');
  });
});
