import assert from 'node:assert/strict';
import {
  type AccountInactiveReason,
  type AccountLifecycle,
  AccountNotConnectedError,
  loadPlatformContext,
  markConnectionLost,
} from '../../src/accounts';
import { markReauthorizationRequired } from '../../src/accounts/lifecycle';
import { createSealedBox } from '../../src/crypto/sealed-box';
import { type TestApi, request, startApi, testEncryptionKey } from '../helpers/api';
import { testDatabase } from '../helpers/db';
import { type PlatformStandIns, startPlatformStandIns } from '../helpers/platform-standins';

/** A lifecycle that records its calls; `failNext` makes the next call throw. */
function recordingLifecycle() {
  const calls: Array<[string, AccountInactiveReason]> = [];
  const state = { failNext: false };
  const lifecycle: AccountLifecycle = {
    async accountDeactivated(accountId, reason) {
      calls.push([accountId, reason]);
      if (state.failNext) {
        state.failNext = false;
        throw new Error('cancellation failed');
      }
    },
  };
  return { lifecycle, calls, state };
}

describe('accounts: list, get, patch, disconnect', function () {
  this.timeout(60_000);
  let platforms: PlatformStandIns;
  let api: TestApi;
  let recorder: ReturnType<typeof recordingLifecycle>;
  let tokens = 0;

  before(async () => {
    platforms = await startPlatformStandIns();
    recorder = recordingLifecycle();
    api = await startApi({ plan: 'enterprise', deps: { adapters: platforms.adapters, accountLifecycle: recorder.lifecycle } });
  });
  after(async () => {
    await api?.close();
    await platforms?.stop();
  });
  beforeEach(() => {
    recorder.calls.length = 0;
  });

  async function connectX(key = api.apiKey, body: Record<string, unknown> = {}) {
    const token = `x-manage-${++tokens}`;
    platforms.x.addUser({ username: `manage${tokens}`, bearerToken: token });
    const res = await request(api.url, 'POST', '/api/v1/accounts', { key, body: { access_token: token, ...body } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  }

  async function rowOf(id: string) {
    const { db } = await testDatabase();
    return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  it('GET /accounts lists the own accounts newest first, inactive ones with their reason, disconnected ones left out', async () => {
    const user = await api.newUser('enterprise');
    const first = await connectX(user.apiKey);
    const second = await connectX(user.apiKey);
    const third = await connectX(user.apiKey);
    await connectX(); // another user's
    await request(api.url, 'PATCH', `/api/v1/accounts/${second.id}`, { key: user.apiKey, body: { active: false } });
    await request(api.url, 'DELETE', `/api/v1/accounts/${first.id}`, { key: user.apiKey });

    const res = await request(api.url, 'GET', '/api/v1/accounts', { key: user.apiKey });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: [third, { ...second, active: false, inactive_reason: 'deactivated' }] });
  });

  it('GET /accounts/:id answers the account; another user\'s, an unknown or a disconnected one is 404; a bad id is 400', async () => {
    const account = await connectX();
    assert.deepEqual((await api.request('GET', `/api/v1/accounts/${account.id}`)).body, { data: account });

    const other = await api.newUser();
    const foreign = await request(api.url, 'GET', `/api/v1/accounts/${account.id}`, { key: other.apiKey });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, { error: { code: 'not_found', message: `Account ${account.id} not found` } });

    const unknown = '00000000-0000-4000-8000-000000000000';
    assert.deepEqual((await api.request('GET', `/api/v1/accounts/${unknown}`)).body, {
      error: { code: 'not_found', message: `Account ${unknown} not found` },
    });
    // A malformed id names no account: 404 on every method, as on every other resource.
    for (const [method, body] of [['GET', undefined], ['PATCH', { timezone: 'UTC' }], ['DELETE', undefined]] as const) {
      const bad = await api.request(method, '/api/v1/accounts/nope', body ? { body } : {});
      assert.deepEqual([bad.status, bad.body], [404, { error: { code: 'not_found', message: 'Account nope not found' } }], method);
    }

    await api.request('DELETE', `/api/v1/accounts/${account.id}`);
    assert.equal((await api.request('GET', `/api/v1/accounts/${account.id}`)).status, 404);
  });

  it('PATCH timezone sets and clears it; a bad zone, an empty body and an unknown field are 400', async () => {
    const account = await connectX();
    const set = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { timezone: 'Asia/Tokyo' } });
    assert.deepEqual(set.body, { data: { ...account, timezone: 'Asia/Tokyo' } });
    const cleared = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { timezone: null } });
    assert.deepEqual(cleared.body, { data: account });

    const cases: Array<[unknown, string]> = [
      [{ timezone: 'Nowhere/Special' }, 'timezone Nowhere/Special is not an IANA time zone name (for example Europe/Berlin or America/New_York)'],
      [{}, 'Nothing to change: send active and/or timezone'],
      [{ active: 'no' }, 'active: must be true or false'],
      [{ username: 'renamed' }, 'Unknown field: username'],
    ];
    for (const [body, message] of cases) {
      const res = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(res.body, { error: { code: 'bad_request', message } });
    }
    assert.deepEqual(recorder.calls, []);
  });

  it('PATCH active false deactivates and cancels scheduled posts (lifecycle account_deactivated); true switches it back on', async () => {
    const account = await connectX();
    const off = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } });
    assert.deepEqual(off.body, { data: { ...account, active: false, inactive_reason: 'deactivated' } });
    assert.deepEqual(recorder.calls, [[account.id, 'account_deactivated']]);

    const on = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: true } });
    assert.deepEqual(on.body, { data: account });
    assert.deepEqual(recorder.calls, [[account.id, 'account_deactivated']]);
  });

  it('PATCH active true on an account whose connection was lost asks for a reconnect', async () => {
    const account = await connectX();
    const { db } = await testDatabase();
    assert.equal(await markConnectionLost(db, account.id, recorder.lifecycle), true);
    assert.deepEqual(recorder.calls, [[account.id, 'connection_lost']]);
    // Repeated, nothing changes, but the (idempotent) cancellation runs again: it finishes one that failed (2026-12-07).
    assert.equal(await markConnectionLost(db, account.id, recorder.lifecycle), false);
    assert.deepEqual(recorder.calls, [[account.id, 'connection_lost'], [account.id, 'connection_lost']]);

    const listed = await api.request('GET', `/api/v1/accounts/${account.id}`);
    assert.deepEqual(listed.body, { data: { ...account, active: false, inactive_reason: 'connection_lost' } });
    const res = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: true } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      error: { code: 'bad_request', message: "X no longer accepts this account's credentials; reconnect it with POST /api/v1/accounts" },
    });
  });

  it('PATCH active false on a connection_lost account changes nothing: active true still asks for a reconnect', async () => {
    const account = await connectX();
    assert.equal(await markConnectionLost((await testDatabase()).db, account.id), true);
    const lost = { ...account, active: false, inactive_reason: 'connection_lost' };

    const off = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } });
    assert.equal(off.status, 200);
    assert.deepEqual(off.body, { data: lost });
    // Repeated, the cancellation keeps the account's own reason.
    assert.deepEqual(recorder.calls, [[account.id, 'connection_lost']]);

    const on = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: true } });
    assert.equal(on.status, 400);
    assert.deepEqual(on.body, {
      error: { code: 'bad_request', message: "X no longer accepts this account's credentials; reconnect it with POST /api/v1/accounts" },
    });
    const row = await rowOf(account.id);
    assert.equal(row.active, false);
    assert.equal(row.inactive_reason, 'connection_lost');
  });

  it('PATCH active false on a reauthorization_required account (it still posts) is deactivated like any other; active true switches it on again', async () => {
    const account = await connectX();
    assert.equal(await markReauthorizationRequired((await testDatabase()).db, account.id), true);

    const off = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } });
    assert.equal(off.status, 200);
    assert.deepEqual(off.body, { data: { ...account, active: false, inactive_reason: 'deactivated' } }, 'the account says what its cancelled posts say');
    assert.deepEqual(recorder.calls, [[account.id, 'account_deactivated']]);

    const on = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: true } });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(on.body, { data: { ...account, active: true, inactive_reason: null } });
  });

  it('an account switched off needing re-authorization before 2026-11-28 (it kept that reason) switches on again, keeping it', async () => {
    const account = await connectX();
    await (await testDatabase()).db.updateTable('accounts').set({ active: false, inactive_reason: 'reauthorization_required' }).where('id', '=', account.id).execute();
    const on = await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: true } });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(on.body, { data: { ...account, active: true, inactive_reason: 'reauthorization_required' } });
  });

  it('markConnectionLost leaves a deactivated account as the user left it', async () => {
    const account = await connectX();
    await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { active: false } });
    assert.equal(await markConnectionLost((await testDatabase()).db, account.id), false);
    assert.equal((await rowOf(account.id)).inactive_reason, 'deactivated');
  });

  it('DELETE disconnects: inactive with reason disconnected, credentials wiped, lifecycle account_disconnected; repeating answers the same', async () => {
    const account = await connectX();
    const res = await api.request('DELETE', `/api/v1/accounts/${account.id}`);
    const disconnected = { ...account, active: false, inactive_reason: 'disconnected' };
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: disconnected });
    assert.deepEqual(recorder.calls, [[account.id, 'account_disconnected']]);
    const row = await rowOf(account.id);
    assert.equal(row.credentials_sealed, null);
    assert.equal(row.active, false);

    const again = await api.request('DELETE', `/api/v1/accounts/${account.id}`);
    assert.deepEqual(again.body, { data: disconnected });
    assert.deepEqual(recorder.calls, [
      [account.id, 'account_disconnected'],
      [account.id, 'account_disconnected'],
    ]);
    assert.equal((await api.request('PATCH', `/api/v1/accounts/${account.id}`, { body: { timezone: 'UTC' } })).status, 404);
  });

  it('a failed cancellation answers 500 after the change committed; repeating the request finishes it', async () => {
    const account = await connectX();
    recorder.state.failNext = true;
    const failed = await api.request('DELETE', `/api/v1/accounts/${account.id}`);
    assert.equal(failed.status, 500);
    assert.equal(failed.body.error.code, 'internal_error');
    assert.equal((await rowOf(account.id)).inactive_reason, 'disconnected');
    const retried = await api.request('DELETE', `/api/v1/accounts/${account.id}`);
    assert.equal(retried.status, 200);
    assert.deepEqual(recorder.calls, [
      [account.id, 'account_disconnected'],
      [account.id, 'account_disconnected'],
    ]);
  });

  it("another user's account: PATCH and DELETE are 404 and change nothing", async () => {
    const account = await connectX();
    const other = await api.newUser('enterprise');
    for (const [method, body] of [['PATCH', { active: false }], ['DELETE', undefined]] as const) {
      const res = await request(api.url, method, `/api/v1/accounts/${account.id}`, { key: other.apiKey, body });
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { error: { code: 'not_found', message: `Account ${account.id} not found` } });
    }
    const row = await rowOf(account.id);
    assert.equal(row.active, true);
    assert.notEqual(row.credentials_sealed, null);
    assert.deepEqual(recorder.calls, []);
  });

  describe('scopes', () => {
    const insufficient = (scope: string) => ({
      error: { code: 'insufficient_scope', message: `This API key lacks the scope ${scope}, which this request needs` },
    });

    it('accounts:read reads but cannot connect, change or disconnect', async () => {
      const account = await connectX();
      const reader = await api.newUser('enterprise', ['accounts:read']);
      assert.equal((await request(api.url, 'GET', '/api/v1/accounts', { key: reader.apiKey })).status, 200);
      const writes: Array<[string, string, unknown]> = [
        ['POST', '/api/v1/accounts', { access_token: 'x' }],
        ['PATCH', `/api/v1/accounts/${account.id}`, { active: false }],
        ['DELETE', `/api/v1/accounts/${account.id}`, undefined],
      ];
      for (const [method, path, body] of writes) {
        const res = await request(api.url, method, path, { key: reader.apiKey, body });
        assert.equal(res.status, 403);
        assert.deepEqual(res.body, insufficient('accounts:write'));
      }
    });

    it('accounts:write alone cannot read; posts scopes reach no account route', async () => {
      const writer = await api.newUser('enterprise', ['accounts:write']);
      const token = `x-manage-${++tokens}`;
      platforms.x.addUser({ username: `manage${tokens}`, bearerToken: token });
      const connected = await request(api.url, 'POST', '/api/v1/accounts', { key: writer.apiKey, body: { access_token: token } });
      assert.equal(connected.status, 201);
      const read = await request(api.url, 'GET', `/api/v1/accounts/${connected.body.data.id}`, { key: writer.apiKey });
      assert.deepEqual(read.body, insufficient('accounts:read'));

      const poster = await api.newUser('enterprise', ['posts:read', 'posts:write']);
      assert.deepEqual((await request(api.url, 'GET', '/api/v1/accounts', { key: poster.apiKey })).body, insufficient('accounts:read'));
      assert.deepEqual(
        (await request(api.url, 'POST', '/api/v1/accounts', { key: poster.apiKey, body: { access_token: 'x' } })).body,
        insufficient('accounts:write'),
      );
    });

    it('no key is 401', async () => {
      const res = await api.request('GET', '/api/v1/accounts', { key: null });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
    });
  });

  describe('loadPlatformContext', () => {
    const box = createSealedBox(Buffer.from(testEncryptionKey, 'hex'));

    it('opens the credentials with the settings from verification, and the adapter accepts them', async () => {
      const account = await connectX();
      const { db } = await testDatabase();
      const { account: row, ctx } = await loadPlatformContext(db, box, account.id);
      assert.equal(row.id, account.id);
      assert.deepEqual(ctx.credentials, { access_token: `x-manage-${tokens}` });
      assert.deepEqual(ctx.settings, { user_id: row.platform_account_id, username: account.username });
      const identity = await platforms.adapters.x.verify(ctx);
      assert.equal(identity.platformAccountId, row.platform_account_id);
    });

    it('throws AccountNotConnectedError for a disconnected or unknown account', async () => {
      const account = await connectX();
      await api.request('DELETE', `/api/v1/accounts/${account.id}`);
      const { db } = await testDatabase();
      await assert.rejects(loadPlatformContext(db, box, account.id), (err: unknown) => {
        assert.ok(err instanceof AccountNotConnectedError);
        assert.equal(err.reason, 'disconnected');
        return true;
      });
      await assert.rejects(loadPlatformContext(db, box, '00000000-0000-4000-8000-000000000001'), (err: unknown) => {
        assert.ok(err instanceof AccountNotConnectedError);
        assert.equal(err.reason, 'not_found');
        return true;
      });
    });
  });
});
