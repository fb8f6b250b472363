import assert from 'node:assert/strict';
import { createApiKey, hashSecret } from '../../src/auth/api-keys';
import { type TestApi, request, startApi } from '../helpers/api';
import { testDatabase } from '../helpers/db';

/** src/auth/key-cache.ts: keys served from a 2-second cache per API process, revocation honoured within it. */
describe('authentication cache', () => {
  const ttlMs = 2_000;
  let now = Date.now();
  let a: TestApi;
  let b: TestApi;
  before(async () => {
    const database = await testDatabase();
    // Two API processes on one database; `a` runs on a clock the tests move.
    a = await startApi({ database, deps: { keyCache: { ttlMs, clock: () => now } } });
    b = await startApi({ database, deps: { keyCache: { ttlMs } } });
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  it('refuses a key revoked by another API process once the cache bound has passed, and not before', async () => {
    const user = await a.newUser('free');
    const { apiKey: admin } = await createApiKey(a.deps.db, { userId: user.userId, name: 'admin', scopes: null, expiresAt: null });
    assert.equal((await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey })).status, 200);
    assert.equal((await request(b.url, 'GET', '/api/v1/posts', { key: user.apiKey })).status, 200);

    const revoked = await request(b.url, 'DELETE', `/api/v1/keys/${user.keyId}`, { key: admin });
    assert.equal(revoked.status, 200);
    const refusal = {
      error: { code: 'unauthorized', message: `This API key was revoked on ${revoked.body.data.revoked_at}; use another key` },
    };
    // The process that revoked it refuses it at once, although it had the key cached.
    const onB = await request(b.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal(onB.status, 401);
    assert.deepEqual(onB.body, refusal);
    // The other process serves its cached row until the bound, then reads the row again.
    now += ttlMs - 1;
    assert.equal((await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey })).status, 200);
    now += 1;
    const onA = await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal(onA.status, 401);
    assert.deepEqual(onA.body, refusal);
  });

  it('takes scope and plan changes within the same bound', async () => {
    const user = await a.newUser('free');
    assert.equal((await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey })).headers.get('x-ratelimit-limit'), '120');
    await a.deps.db.updateTable('api_keys').set({ scopes: ['posts:write'] }).where('id', '=', user.keyId).execute();
    await a.deps.db.updateTable('users').set({ plan: 'pro' }).where('id', '=', user.userId).execute();
    assert.equal((await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey })).status, 200);
    now += ttlMs;
    const refused = await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '1200');
  });

  it('checks expiry on every request, cached or not', async () => {
    const user = await a.newUser('free');
    const expiresAt = new Date(now + 500);
    await a.deps.db.updateTable('api_keys').set({ expires_at: expiresAt }).where('id', '=', user.keyId).execute();
    assert.equal((await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey })).status, 200);
    now += 500;
    const res = await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: { code: 'unauthorized', message: `This API key expired on ${expiresAt.toISOString()}; create a new key` } });
  });

  it('never caches a refusal: a key that matched nothing works as soon as its row exists', async () => {
    const user = await a.newUser('free');
    const secret = `hld_${'Z'.repeat(8)}${Date.now().toString(36).padStart(32, '0')}`;
    assert.equal((await request(a.url, 'GET', '/api/v1/posts', { key: secret })).status, 401);
    await a.deps.db
      .insertInto('api_keys')
      .values({ user_id: user.userId, name: 'late', prefix: secret.slice(0, 12), key_hash: hashSecret(secret), scopes: null, expires_at: null, revoked_at: null, last_used_at: null })
      .execute();
    assert.equal((await request(a.url, 'GET', '/api/v1/posts', { key: secret })).status, 200);
  });

  it('still records last_used_at at most once a minute', async () => {
    const user = await a.newUser('free');
    const lastUsed = async () =>
      (await a.deps.db.selectFrom('api_keys').select('last_used_at').where('id', '=', user.keyId).executeTakeFirstOrThrow()).last_used_at;
    await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    const first = await lastUsed();
    assert.equal(first?.getTime(), now);
    now += 30_000;
    await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal((await lastUsed())?.getTime(), first!.getTime());
    now += 31_000;
    await request(a.url, 'GET', '/api/v1/posts', { key: user.apiKey });
    assert.equal((await lastUsed())?.getTime(), now);
  });
});
