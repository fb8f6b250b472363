import assert from 'node:assert/strict';
import { sql, type Transaction } from 'kysely';
import { createApiKey, hashSecret } from '../../src/auth/api-keys';
import { createKeyAuthenticator } from '../../src/auth/key-cache';
import type { Database } from '../../src/db';
import { startDatabaseNotifications, type DatabaseNotifications } from '../../src/db/notifications';
import { createLogger } from '../../src/logger';
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

/**
 * src/auth/key-cache.ts with the process hearing key changes (`herald_key_changes`, migration 0160), as `npm start`
 * runs it: a change committed anywhere drops the cached row at once, so rows are kept 30 s instead of 2 s.
 */
describe('authentication cache, hearing key changes', () => {
  let now = Date.now();
  let notifications: DatabaseNotifications;
  let heard: TestApi;
  let other: TestApi;
  before(async () => {
    const database = await testDatabase();
    notifications = startDatabaseNotifications(database.url, createLogger('silent'));
    await notifications.ready;
    heard = await startApi({ database, deps: { keyCache: { notifications, clock: () => now } } });
    other = await startApi({ database });
  });
  after(async () => {
    await heard.close();
    await other.close();
    await notifications.close();
  });

  /** A change no trigger announces, as if the notification were lost: what the cache then serves is its own row. */
  const silently = (change: (trx: Transaction<Database>) => Promise<unknown>) =>
    heard.deps.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await change(trx);
    });
  const status = async (key: string) => (await request(heard.url, 'GET', '/api/v1/posts', { key })).status;
  /** Asks until the answer is `expected` (a notification arrives in its own time), without moving the cache's clock. */
  const becomes = async (key: string, expected: number) => {
    for (let i = 0; (await status(key)) !== expected; i++) {
      if (i > 100) assert.fail(`still not ${expected} after 2 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('refuses a key revoked by another process as soon as the change is heard, with no time passing on its clock', async () => {
    const user = await heard.newUser('free');
    const { apiKey: admin } = await createApiKey(heard.deps.db, { userId: user.userId, name: 'admin', scopes: null, expiresAt: null });
    assert.equal(await status(user.apiKey), 200);
    assert.equal((await request(other.url, 'DELETE', `/api/v1/keys/${user.keyId}`, { key: admin })).status, 200);
    await becomes(user.apiKey, 401);
  });

  it('takes a plan change and a deleted key as soon as they are heard', async () => {
    const user = await heard.newUser('free');
    assert.equal((await request(heard.url, 'GET', '/api/v1/posts', { key: user.apiKey })).headers.get('x-ratelimit-limit'), '120');
    await heard.deps.db.updateTable('users').set({ plan: 'pro' }).where('id', '=', user.userId).execute();
    for (let i = 0; (await request(heard.url, 'GET', '/api/v1/posts', { key: user.apiKey })).headers.get('x-ratelimit-limit') !== '1200'; i++) {
      if (i > 100) assert.fail('the plan change was not heard within 2 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await heard.deps.db.deleteFrom('api_keys').where('id', '=', user.keyId).execute();
    await becomes(user.apiKey, 401);
  });

  it('keeps a row 30 s while changes are heard, not 2 s', async () => {
    const user = await heard.newUser('free');
    assert.equal(await status(user.apiKey), 200);
    await silently((trx) => trx.updateTable('api_keys').set({ revoked_at: new Date(now) }).where('id', '=', user.keyId).execute());
    now += 29_999;
    assert.equal(await status(user.apiKey), 200);
    now += 1;
    assert.equal(await status(user.apiKey), 401);
  });

  it('announces what the cache holds, not last_used_at or a rename', async () => {
    const user = await heard.newUser('free');
    const payloads: string[] = [];
    const stop = notifications.on('herald_key_changes', (payload) => payloads.push(payload));
    try {
      await heard.deps.db.updateTable('api_keys').set({ last_used_at: new Date(), name: 'renamed' }).where('id', '=', user.keyId).execute();
      await heard.deps.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() + 86_400_000) }).where('id', '=', user.keyId).execute();
      for (let i = 0; payloads.length === 0; i++) {
        if (i > 100) assert.fail('the new expiry was not announced within 2 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Notifications arrive in commit order: had the first update been announced, it would be here by now.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(payloads, [`key:${user.keyId}`]);
    } finally {
      stop();
    }
  });

  it('drops every row when its connection is lost, then listens again', async () => {
    const user = await heard.newUser('free');
    assert.equal(await status(user.apiKey), 200);
    await silently((trx) => trx.updateTable('api_keys').set({ scopes: ['posts:write'] }).where('id', '=', user.keyId).execute());
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'herald-notifications' and pid <> pg_backend_pid()`.execute(heard.deps.db);
    await becomes(user.apiKey, 403);
    for (let i = 0; !notifications.listening; i++) {
      if (i > 200) assert.fail('the notifications did not listen again');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });
});

/** The read that overlaps a change: with a stand-in for the notifications connection, to time the change inside the read. */
describe('authentication cache: a read that overlaps a change heard', () => {
  it('keeps that row only 2 s, since it may predate the change', async () => {
    const database = await testDatabase();
    const api = await startApi({ database });
    try {
      const user = await api.newUser('free');
      const onPayload: Array<(payload: string) => void> = [];
      const notifications: DatabaseNotifications = {
        ready: Promise.resolve(),
        listening: true,
        on: (_channel, fn) => (onPayload.push(fn), () => undefined),
        onDeaf: () => () => undefined,
        close: async () => undefined,
      };
      let now = Date.now();
      const cache = createKeyAuthenticator(api.deps.db, { notifications, clock: () => now });
      const reading = cache.authenticate(`Bearer ${user.apiKey}`);
      // Heard while the row is read: some other key changed, or this one did after the read began.
      for (const fn of onPayload) fn('key:00000000-0000-4000-8000-000000000000');
      await reading;
      await database.db.transaction().execute(async (trx) => {
        await sql`set local session_replication_role = replica`.execute(trx);
        await trx.updateTable('api_keys').set({ revoked_at: new Date(now) }).where('id', '=', user.keyId).execute();
      });
      now += 2_000;
      await assert.rejects(cache.authenticate(`Bearer ${user.apiKey}`), /revoked/);
    } finally {
      await api.close();
    }
  });
});
